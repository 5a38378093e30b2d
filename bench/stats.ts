// Latency summaries shared by the benchmarks.

/** The p-th percentile of an ascending list (nearest rank), in the list's unit. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const ms3 = (x: number) => Math.round(x * 1000) / 1000;

/** n, p50, p95, p99 and max of raw samples (milliseconds, three decimals). */
export function summary(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: ms3(percentile(s, 50)), p95: ms3(percentile(s, 95)), p99: ms3(percentile(s, 99)), max: ms3(percentile(s, 100)) };
}
