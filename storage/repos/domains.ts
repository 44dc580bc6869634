import { shapedRows } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import type { DkimKeyRow, DomainClaimRow, DomainRow } from './domains-tables.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';

export type { DkimKeyRow, DomainClaimRow, DomainRow, DkimKeyState, ClaimStatus, CapabilityState } from './domains-tables.js';

export interface DomainsRepo {
  insert(row: DomainRow): Promise<void>;
  byId(teamId: string, id: string): Promise<DomainRow | undefined>;
  /** Any team's domain: the operator socket and the scheduled re-check. */
  byIdAnyTeam(id: string): Promise<DomainRow | undefined>;
  list(teamId: string | undefined, page: PageQuery): Promise<Page<DomainRow>>;
  update(id: string, patch: Partial<Omit<DomainRow, 'id' | 'team_id'>>): Promise<void>;
  remove(id: string): Promise<void>;
  /** Every team's live (unreleased) copies of a name. */
  liveCopies(name: string): Promise<DomainRow[]>;
  /** The copy that holds the name: its ownership proof verified, not released. */
  owner(name: string): Promise<DomainRow | undefined>;
  ownerByReceivingName(receivingName: string): Promise<DomainRow | undefined>;
  /** Live domains at this receiving name, verified or not (to say why mail for it is refused). */
  claimantsByReceivingName(receivingName: string): Promise<DomainRow[]>;
  /** Names whose holding copy may send (the sandbox rule's "domain verified on the service"). */
  sendingReadyNames(): Promise<string[]>;
  /** Unreleased domain ids after a cursor, in id order, for the re-check. */
  liveIdsAfter(afterId: string, limit: number): Promise<string[]>;

  insertKey(row: DkimKeyRow): Promise<void>;
  keys(domainId: string): Promise<DkimKeyRow[]>;
  updateKey(id: string, patch: Partial<Pick<DkimKeyRow, 'state' | 'activated_at' | 'retire_at'>>): Promise<void>;
  removeKey(id: string): Promise<void>;

  insertClaim(row: DomainClaimRow): Promise<void>;
  claimById(teamId: string | undefined, id: string): Promise<DomainClaimRow | undefined>;
  pendingClaim(teamId: string, name: string): Promise<DomainClaimRow | undefined>;
  pendingClaimIds(limit: number): Promise<string[]>;
  updateClaim(id: string, patch: Partial<Omit<DomainClaimRow, 'id' | 'team_id'>>): Promise<void>;
}

export function domainsRepo(db: Db): DomainsRepo {
  const live = () => db.selectFrom('domains').selectAll().where('released_at', 'is', null);
  return {
    async insert(row) {
      await db.insertInto('domains').values(row).execute();
    },
    byId: (teamId, id) => db.selectFrom('domains').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    byIdAnyTeam: (id) => db.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst(),
    list(teamId, page) {
      let q = db.selectFrom('domains').selectAll();
      if (teamId !== undefined) q = q.where('team_id', '=', teamId);
      return paginate(db, q, 'id', page);
    },
    async update(id, patch) {
      await db.updateTable('domains').set(patch).where('id', '=', id).execute();
    },
    async remove(id) {
      await db.deleteFrom('domain_dkim_keys').where('domain_id', '=', id).execute();
      await db.deleteFrom('domains').where('id', '=', id).execute();
    },
    liveCopies: (name) => live().where('name', '=', name).orderBy('id').execute(),
    // Compiled once, as keys below: every send reads its domain's holder and DKIM keys.
    owner: async (name) => (await shapedRows<DomainRow>(db, 'domains.owner', (m) => live().where('name', '=', m('name'))
      .where('owner_verified_at', 'is not', null), { name }))[0],
    ownerByReceivingName: (receivingName) =>
      live().where('receiving_name', '=', receivingName).where('owner_verified_at', 'is not', null).executeTakeFirst(),
    claimantsByReceivingName: (receivingName) => live().where('receiving_name', '=', receivingName).execute(),
    async sendingReadyNames() {
      const rows = await live().where('sending_ready', '=', 1).where('owner_verified_at', 'is not', null).execute();
      return [...new Set(rows.map((r) => r.name))];
    },
    async liveIdsAfter(afterId, limit) {
      const rows = await db.selectFrom('domains').select('id').where('released_at', 'is', null).where('id', '>', afterId)
        .orderBy('id').limit(limit).execute();
      return rows.map((r) => r.id);
    },

    async insertKey(row) {
      await db.insertInto('domain_dkim_keys').values(row).execute();
    },
    keys: (domainId) => shapedRows<DkimKeyRow>(db, 'domains.keys', (m) => db.selectFrom('domain_dkim_keys').selectAll()
      .where('domain_id', '=', m('domain')).orderBy('id'), { domain: domainId }),
    async updateKey(id, patch) {
      await db.updateTable('domain_dkim_keys').set(patch).where('id', '=', id).execute();
    },
    async removeKey(id) {
      await db.deleteFrom('domain_dkim_keys').where('id', '=', id).execute();
    },

    async insertClaim(row) {
      await db.insertInto('domain_claims').values(row).execute();
    },
    claimById(teamId, id) {
      let q = db.selectFrom('domain_claims').selectAll().where('id', '=', id);
      if (teamId !== undefined) q = q.where('team_id', '=', teamId);
      return q.executeTakeFirst();
    },
    pendingClaim: (teamId, name) =>
      db.selectFrom('domain_claims').selectAll().where('team_id', '=', teamId).where('name', '=', name).where('status', '=', 'pending').executeTakeFirst(),
    async pendingClaimIds(limit) {
      const rows = await db.selectFrom('domain_claims').select('id').where('status', '=', 'pending').orderBy('id').limit(limit).execute();
      return rows.map((r) => r.id);
    },
    async updateClaim(id, patch) {
      await db.updateTable('domain_claims').set(patch).where('id', '=', id).execute();
    },
  };
}
