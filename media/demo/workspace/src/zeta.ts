export function zetaFn(x: number): number {
  return x + 1;
}

export function zetaFn2(s: string): string {
  return s.trim();
}
