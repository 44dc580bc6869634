// What the benches share to read their settings and make their data, so every bench reads
// `BENCH_*` the same way and a run's generated data is the same from run to run.

/** A positive integer from the environment, or the fallback when unset; anything else stops the bench. */
export function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

/** A cheap deterministic generator (a linear congruential one), so runs are comparable. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
