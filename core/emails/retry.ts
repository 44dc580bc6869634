// When a deferred recipient is tried again: quickly at first (greylisting usually lifts within
// minutes), then further apart, up to every 8 hours until the queue lifetime ends.
const scheduleMinutes = [1, 5, 15, 30, 60, 120, 240, 480];

/** Delay before the next try after `attempts` tries so far (1 = the first try failed). */
export function retryDelayMs(attempts: number): number {
  const index = Math.min(Math.max(attempts, 1), scheduleMinutes.length) - 1;
  return scheduleMinutes[index]! * 60_000;
}
