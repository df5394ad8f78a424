export function gammaFn(x: number): number {
  return x + 1;
}

export function gammaFn2(s: string): string {
  return s.trim();
}
