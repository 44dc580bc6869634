import { teamsRepo } from '../../storage/repos/index.js';
import type { Db, TeamRow } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { missingField, notFound, validationError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { PlanCatalog } from './plans.js';
import { freeSlug } from './slug.js';
import { oneLine } from './text.js';
import { teamSummary, type TeamSummary } from './view.js';

// What the operator does to teams over the admin socket: create and list them, put one on a
// plan, suspend or reinstate it, mark it reviewed (trusted). Suspending moves `teams.status`,
// whose trigger moves auth_generation (migration 008): every process drops the team's cached keys
// at their next request, so the suspension counts at once everywhere.

export interface TeamsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  plans: PlanCatalog;
}

export function teamsService(deps: TeamsDeps) {
  const repo = teamsRepo(deps.db);
  const summary = (row: TeamRow) => teamSummary(row, deps.plans.of(row.plan_code));
  const planCode = (code: unknown): string | null => {
    if (code === undefined || code === null || code === 'default') return null;
    if (typeof code !== 'string' || !deps.plans.has(code)) {
      throw validationError(422, 'plan', `No plan is configured with the code ${JSON.stringify(code)} (known: ${deps.plans.all().map((p) => p.code).join(', ')}).`);
    }
    return code;
  };
  const row = async (id: string) => {
    const found = await repo.byId(id);
    if (!found) throw notFound('Team');
    return found;
  };

  return {
    async create(name: unknown, plan?: unknown): Promise<TeamSummary> {
      if (name === undefined || name === null) throw missingField('name');
      const trimmed = oneLine('name', typeof name === 'string' ? name.trim() : name, 80, 1);
      const now = deps.clock.now().toISOString();
      const team: TeamRow = {
        id: newId(), name: trimmed, slug: await freeSlug(repo, trimmed), status: 'active', plan_code: planCode(plan),
        sender_name: null, postal_address: null, ai_assist_enabled: 0, brand_kit: null, trusted_at: null, created_at: now, updated_at: null,
      };
      await repo.insert(team);
      deps.logger.info({ teamId: team.id, plan: team.plan_code ?? 'default' }, 'team created');
      return summary(team);
    },

    /** The configured plans, `default` first. */
    plans: () => deps.plans.all(),

    async list(): Promise<TeamSummary[]> {
      return (await repo.list()).map(summary);
    },

    /** The operator names a team by id or by its (unique enough) name. */
    async resolve(idOrName: string): Promise<TeamSummary> {
      if (looksLikeId(idOrName)) {
        const byId = await repo.byId(idOrName.toLowerCase());
        if (byId) return summary(byId);
      }
      const byName = await repo.byName(idOrName);
      if (byName.length === 1) return summary(byName[0]!);
      if (byName.length > 1) throw validationError(422, 'team', `${byName.length} teams are named "${idOrName}"; use the team id.`);
      throw notFound('Team');
    },

    /** Suspend (`suspended`) or reinstate (`active`) a team. */
    async setStatus(id: string, status: TeamRow['status']): Promise<void> {
      const before = await row(id);
      await repo.setStatus(id, status);
      if (before.status !== status) deps.logger.info({ teamId: id, status }, status === 'suspended' ? 'team suspended' : 'team reinstated');
    },

    async setPlan(id: string, code: unknown): Promise<TeamSummary> {
      const before = await row(id);
      const plan_code = planCode(code);
      await repo.update(id, { plan_code, updated_at: deps.clock.now().toISOString() });
      deps.logger.info({ teamId: id, plan: plan_code ?? 'default', was: before.plan_code ?? 'default' }, 'team plan changed');
      return summary({ ...before, plan_code });
    },

    /** The operator's review: trusted teams are sending tier 3 and out of the sandbox. */
    async setTrusted(id: string, trusted: boolean): Promise<TeamSummary> {
      const before = await row(id);
      const trusted_at = trusted ? (before.trusted_at ?? deps.clock.now().toISOString()) : null;
      await repo.update(id, { trusted_at });
      if ((before.trusted_at !== null) !== trusted) deps.logger.info({ teamId: id, trusted }, trusted ? 'team trusted' : 'team trust withdrawn');
      return summary({ ...before, trusted_at });
    },
  };
}

export type TeamsService = ReturnType<typeof teamsService>;
