import type { ChildProcess } from 'node:child_process';
import type { EventEmitter } from 'node:events';

// Every wait in a test ends: it either sees what it waited for or fails saying what that was.
// The bounds are generous on purpose — the suite runs two files at a time on two shared cores,
// and a bound that trips on a correct run is as bad as none — yet always finite and well below
// the file-level timeout (package.json "tap.timeout"), so the failure names the wait, not the file.

/** The bound a wait gets when its caller names none. */
export const DEFAULT_WAIT_MS = 30_000;

/** Rejects with "timed out after N ms waiting for `what`" when `promise` has not settled by then. */
export async function withDeadline<T>(what: string, promise: Promise<T>, timeoutMs = DEFAULT_WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `check` until it answers a value (anything but undefined/false) and answers it; fails
 * naming `what` after `timeoutMs`. A check that itself hangs is cut off at the same deadline.
 */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = DEFAULT_WAIT_MS, intervalMs = 25): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const left = Math.max(1, until - Date.now());
    const value = await withDeadline(what, check(), left).catch((err: unknown) => {
      if (Date.now() >= until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: err });
      throw err;
    });
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(1, until - Date.now()))));
  }
}

/** Resolves with the event's arguments once `emitter` emits `event`; rejects on 'error' or at the deadline. */
export function eventWithin<T extends unknown[] = unknown[]>(what: string, emitter: EventEmitter, event: string, timeoutMs = DEFAULT_WAIT_MS): Promise<T> {
  let off = () => undefined as void;
  const seen = new Promise<T>((resolve, reject) => {
    const onEvent = (...args: unknown[]) => { off(); resolve(args as T); };
    const onError = (err: Error) => { off(); reject(err); };
    off = () => { emitter.off(event, onEvent); emitter.off('error', onError); };
    emitter.once(event, onEvent);
    if (event !== 'error') emitter.once('error', onError);
  });
  return withDeadline(what, seen, timeoutMs).finally(() => off());
}

/** Resolves once `child` has exited (at once when it already has); fails naming `what` at the deadline. */
export function exitWithin(what: string, child: ChildProcess, timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  if (gone()) return Promise.resolve();
  return withDeadline(what, new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    if (gone()) resolve();
  }), timeoutMs);
}
