export function epsilonFn(x: number): number {
  return x + 1;
}

export function epsilonFn2(s: string): string {
  return s.trim();
}
