/** How a lookup memo keeps its answers. */
export interface LookupMemoOptions<V> {
  /** How long an answer is kept (ms); 0 or less asks every time. */
  ttlMs: number;
  /** Keys kept at most; the oldest go first. */
  maxEntries: number;
  /** Milliseconds from a steady clock. */
  now: () => number;
  /** Whether an answer is kept (default: every one); one that is not is asked again next time. */
  keepsAnswer?: (answer: V) => boolean;
  /** Whether a failure is kept (default: none). */
  keepsFailure?: (err: unknown) => boolean;
}

/**
 * Remembers a lookup's promise per key for a while in this process, so that the same key asked
 * again soon (every delivery to one domain, every recipient of one domain) costs no DNS or Redis
 * round trip, and lookups asked together share one. The recipient checks' resolver
 * (cache.ts), delivery routes and MTA-STS policies each keep one.
 */
export function lookupMemo<V>(ask: (key: string) => Promise<V>, options: LookupMemoOptions<V>): (key: string) => Promise<V> {
  if (options.ttlMs <= 0) return ask;
  const kept = new Map<string, { at: number; answer: Promise<V> }>();
  const forget = (key: string, memo: { answer: Promise<V> }) => {
    if (kept.get(key) === memo) kept.delete(key);
  };
  return (key) => {
    const now = options.now();
    const hit = kept.get(key);
    if (hit && now - hit.at < options.ttlMs) return hit.answer;
    kept.delete(key);
    if (kept.size >= options.maxEntries) kept.delete(kept.keys().next().value!);
    const memo = { at: now, answer: ask(key) };
    kept.set(key, memo);
    memo.answer.then(
      (answer) => { if (options.keepsAnswer && !options.keepsAnswer(answer)) forget(key, memo); },
      (err: unknown) => { if (!options.keepsFailure?.(err)) forget(key, memo); },
    );
    return memo.answer;
  };
}
