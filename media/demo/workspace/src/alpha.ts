export function alphaFn(x: number): number {
  return x + 1;
}

export function alphaFn2(s: string): string {
  return s.trim();
}
