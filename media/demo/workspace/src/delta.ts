export function deltaFn(x: number): number {
  return x + 1;
}

export function deltaFn2(s: string): string {
  return s.trim();
}
