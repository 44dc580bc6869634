import type { Readable } from 'node:stream';

/** What one scan found. `error` covers clamd down, refusing, or past svc's deadline. */
export type Verdict =
  | { kind: 'clean' }
  | { kind: 'infected'; signature: string }
  | { kind: 'error'; reason: string };

export interface Scanner {
  /** False when no scanner is configured: messages are stored marked unscanned. */
  readonly enabled: boolean;
  /** Largest input worth sending; bigger ones are decided by policy without a scan. */
  readonly maxBytes: number;
  /** Reads the stream to its end (or until the deadline) and answers; never throws. */
  scan(input: Readable): Promise<Verdict>;
}

/** Scanning off: nothing is read, every message is unscanned. */
export const noScanner: Scanner = {
  enabled: false,
  maxBytes: Number.MAX_SAFE_INTEGER,
  scan: async (input) => {
    input.resume();
    return { kind: 'error', reason: 'scanning is off' };
  },
};

/**
 * clamd's heuristic for archives past its limits (nested, multi-file and gzip bombs). Such a part
 * could not be inspected; svc treats it as a virus (dropped) rather than as clean.
 */
export const isLimitsExceeded = (signature: string): boolean => /^Heuristics\.Limits\.Exceeded/i.test(signature);
