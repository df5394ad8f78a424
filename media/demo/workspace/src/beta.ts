export function betaFn(x: number): number {
  return x + 1;
}

export function betaFn2(s: string): string {
  return s.trim();
}
