import type { TeamScope } from '../storage/sql/index.js';
import { daysBefore } from './time.js';

// A team's records age out on its plan's retention window (spec: request logs, dropped received
// records); a plan without one leaves the kind's own config default. Pruning runs once for every
// team on the default and once for each team whose plan sets another window.

export type { TeamScope };

export interface RetentionWindows {
  /** The kind's config default, for every team whose plan sets no window. */
  fallbackDays: number;
  /** Teams whose plan sets a window other than the default. */
  teams: readonly { teamId: string; days: number }[];
}

/** The windows of today's teams and plans around a kind's default. */
export type RetentionWindowsOf = (fallbackDays: number) => Promise<RetentionWindows>;

/** One window for every team (tests, and installs without plans). */
export const fixedWindow = (days: number): RetentionWindows => ({ fallbackDays: days, teams: [] });

/**
 * Runs `prune` with each window's cutoff over the teams it covers: the default's first (every
 * team but the exceptions), then each exception. Answers the sum of what the passes deleted.
 */
export async function pruneByWindows(
  windows: RetentionWindows, now: Date, prune: (cutoff: string, scope: TeamScope) => Promise<number>,
): Promise<number> {
  let total = await prune(daysBefore(now, windows.fallbackDays), { except: windows.teams.map((w) => w.teamId) });
  for (const { teamId, days } of windows.teams) total += await prune(daysBefore(now, days), { only: teamId });
  return total;
}
