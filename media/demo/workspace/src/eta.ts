export function etaFn(x: number): number {
  return x + 1;
}

export function etaFn2(s: string): string {
  return s.trim();
}
