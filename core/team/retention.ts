import { teamsRepo } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import type { RetentionWindows } from '../retention-windows.js';
import type { PlanCatalog } from './plans.js';

/**
 * Each team's retention window: its plan's `retention_days`, else the kind's default. Read at
 * every pruning run, so a team moved to another plan ages out on the new one from the next run.
 */
export const teamRetentionWindows = (db: Db, plans: PlanCatalog) => async (fallbackDays: number): Promise<RetentionWindows> => {
  const teams = await teamsRepo(db).list();
  const own = teams.map((team) => ({ teamId: team.id, days: plans.of(team.plan_code).limits.retention_days }))
    .filter((w): w is { teamId: string; days: number } => w.days !== null && w.days !== fallbackDays);
  return { fallbackDays, teams: own };
};
