import { shapedRows } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import type { TeamRow } from '../sql/tables.js';

export type TeamPatch = Partial<Pick<TeamRow,
  'name' | 'sender_name' | 'postal_address' | 'ai_assist_enabled' | 'brand_kit' | 'plan_code' | 'trusted_at' | 'updated_at'>>;

export interface TeamsRepo {
  insert(row: TeamRow): Promise<void>;
  byId(id: string): Promise<TeamRow | undefined>;
  byName(name: string): Promise<TeamRow[]>;
  slugTaken(slug: string): Promise<boolean>;
  list(): Promise<TeamRow[]>;
  setStatus(id: string, status: TeamRow['status']): Promise<boolean>;
  update(id: string, patch: TeamPatch): Promise<boolean>;
  /** Live (unreleased) domains and webhook endpoints of the team: what the plan's limits count. */
  countDomains(teamId: string): Promise<number>;
  countWebhookEndpoints(teamId: string): Promise<number>;
  /** Whether the team holds a domain that may send (its sending tier's first step). */
  hasSendingDomain(teamId: string): Promise<boolean>;
  /** Outbox events of these types the team had in [from, to): the new-account ramp's clean days. */
  countEvents(teamId: string, type: string, from: string, to: string): Promise<number>;
}

/** The columns of TeamRow; settings columns added later are read by their own areas. */
// TeamRow's own columns: settings of other areas (audience_from_sends) are read by their owners.
const teamColumns = [
  'id', 'name', 'slug', 'status', 'plan_code', 'sender_name', 'postal_address', 'ai_assist_enabled', 'brand_kit', 'trusted_at',
  'created_at', 'updated_at',
] as const;

export function teamsRepo(db: Db): TeamsRepo {
  return {
    async insert(row) {
      await db.insertInto('teams').values(row).execute();
    },
    // Compiled once: every received message and many requests read their team.
    byId: async (id) => (await shapedRows<TeamRow>(db, 'teams.byId', (m) => db.selectFrom('teams').select(teamColumns)
      .where('id', '=', m('id')), { id }))[0],
    byName: (name) => db.selectFrom('teams').select(teamColumns).where('name', '=', name).execute(),
    slugTaken: async (slug) => (await db.selectFrom('teams').select('id').where('slug', '=', slug).executeTakeFirst()) !== undefined,
    list: () => db.selectFrom('teams').select(teamColumns).orderBy('id', 'desc').execute(),
    async setStatus(id, status) {
      const result = await db.updateTable('teams').set({ status }).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async update(id, patch) {
      const result = await db.updateTable('teams').set(patch).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    countDomains: async (teamId) => Number((await db.selectFrom('domains').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId).where('released_at', 'is', null).executeTakeFirstOrThrow()).n),
    countWebhookEndpoints: async (teamId) => Number((await db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId).executeTakeFirstOrThrow()).n),
    hasSendingDomain: async (teamId) => (await db.selectFrom('domains').select('id').where('team_id', '=', teamId)
      .where('released_at', 'is', null).where('owner_verified_at', 'is not', null).where('sending_ready', '=', 1).executeTakeFirst()) !== undefined,
    countEvents: async (teamId, type, from, to) => Number((await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId).where('type', '=', type).where('created_at', '>=', from).where('created_at', '<', to)
      .executeTakeFirstOrThrow()).n),
  };
}

/** The team's `audience_from_sends` (migration 012; true for a team not found). */
export async function audienceFromSends(db: Db, teamId: string): Promise<boolean> {
  const row = await db.selectFrom('teams').select('audience_from_sends').where('id', '=', teamId).executeTakeFirst();
  return row ? Boolean(row.audience_from_sends) : true;
}

export async function setAudienceFromSends(db: Db, teamId: string, value: boolean): Promise<void> {
  await db.updateTable('teams').set({ audience_from_sends: value ? 1 : 0 }).where('id', '=', teamId).execute();
}
