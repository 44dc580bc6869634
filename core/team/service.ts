import { audienceFromSends, teamsRepo } from '../../storage/repos/index.js';
import type { Db, TeamRow } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { notFound } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Principal } from '../principal.js';
import type { RegionDirectory } from '../regions.js';
import type { SendAllowance } from './allowance.js';
import { checkPlanLimit, type Plan, type PlanCatalog } from './plans.js';
import { checkPatch, writePatch, type TeamPatchInput } from './profile.js';
import { leftSandbox } from './standing.js';
import { sendUsage, type SendUsage } from './usage.js';
import { hostedLogo } from './uploads.js';
import { teamView, type TeamView } from './view.js';

// The team as its own keys see it (GET/PATCH /team), and what other areas ask of it: the plan
// (limits), whether the team left the sandbox, the send allowance and its usage.

export interface TeamDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  plans: PlanCatalog;
  regions: RegionDirectory;
  /** Whether an AI provider is configured. */
  aiConfigured: boolean;
  allowance: SendAllowance;
  /** scheme://host of links (core/link-base.ts): how svc's own hosted logo URLs are told apart. */
  linkBase: () => string;
}

export function teamService(deps: TeamDeps) {
  const repo = teamsRepo(deps.db);
  const load = async (teamId: string): Promise<TeamRow> => {
    const row = await repo.byId(teamId);
    if (!row) throw notFound('Team');
    return row;
  };
  const view = async (row: TeamRow): Promise<TeamView> => teamView(row, {
    plan: deps.plans.of(row.plan_code),
    hasSendingDomain: await repo.hasSendingDomain(row.id),
    audienceFromSends: await audienceFromSends(deps.db, row.id),
    regions: deps.regions,
  });

  return {
    get: async (teamId: string): Promise<TeamView> => view(await load(teamId)),

    async update(caller: Principal, input: TeamPatchInput): Promise<TeamView> {
      const team = await load(caller.teamId);
      const logo = sentLogo(input);
      const hosted = logo !== undefined && (await hostedLogo(deps, team.id, logo)) ? logo : undefined;
      const patch = checkPatch({ db: deps.db, aiConfigured: deps.aiConfigured, hostedLogo: hosted }, team, caller, input);
      const changed = await writePatch(deps.db, team, patch, deps.clock.now().toISOString());
      if (changed.length) deps.logger.info({ teamId: team.id, fields: changed }, 'team updated');
      return view(await load(team.id));
    },

    /** The team's plan (limits for the domains, webhooks and contacts areas). */
    planOf: async (teamId: string): Promise<Plan> => deps.plans.of((await load(teamId)).plan_code),

    /** The team's plan read through the caller's connection (inside its transaction). */
    planIn: async (db: Db, teamId: string): Promise<Plan> => deps.plans.of((await teamsRepo(db).byId(teamId))?.plan_code ?? null),

    /** Refuses the team's next domain or webhook endpoint when its plan has as many as it allows. */
    async checkLimit(teamId: string, limit: 'domain_limit' | 'webhook_endpoint_limit'): Promise<void> {
      const plan = deps.plans.of((await load(teamId)).plan_code);
      if (plan.limits[limit] === null) return;
      const current = limit === 'domain_limit' ? await repo.countDomains(teamId) : await repo.countWebhookEndpoints(teamId);
      checkPlanLimit(plan, limit, current);
    },

    leftSandbox: async (teamId: string): Promise<boolean> => leftSandbox(await load(teamId)),

    usage: (teamId: string): Promise<SendUsage> => sendUsage(deps.db, deps.plans, deps.allowance, teamId, deps.clock.now()),
  };
}

export type TeamService = ReturnType<typeof teamService>;

/** The logo URL a PATCH sends, if it sends one as a string. */
function sentLogo(input: TeamPatchInput): string | undefined {
  const kit: unknown = input.brand_kit;
  if (typeof kit !== 'object' || kit === null) return undefined;
  const logo = (kit as Record<string, unknown>).logo_url;
  return typeof logo === 'string' ? logo : undefined;
}
