/** The median of `values` (the upper one of an even count); `values` is not changed. */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
