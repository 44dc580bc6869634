// The words the operator's queue tools and the admin socket share: the states a recipient shows
// in the queue and the durations an operator types. Core's root, not core/emails: the command
// line reads them to check its arguments, and must not load the emails area (and storage) for that.

/** The queue states are the recipient's own, with `deferred` told apart from `queued`: a queued recipient that was tried before. */
export const queueStates = ['scheduled', 'queued', 'deferred', 'held', 'submitting', 'ambiguous'] as const;
export type QueueState = (typeof queueStates)[number];

const DURATION = /^(\d+)(s|m|h|d)?$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90`, `90s`, `15m`, `2h`, `3d` → milliseconds; undefined when it is not one. */
export function durationMs(value: string): number | undefined {
  const match = DURATION.exec(value.trim());
  return match ? Number(match[1]) * UNIT_MS[match[2] ?? 's']! : undefined;
}
