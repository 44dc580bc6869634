import type { Db } from '../sql/db.js';
import { claimLeased } from '../sql/lease-claim.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from './webhooks-tables.js';

export type { WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow };

export type EndpointPatch = Partial<Pick<WebhookEndpointRow,
  'url' | 'events' | 'status' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at' | 'disabled_reason' | 'updated_at'>>;

export type DeliveryPatch = Partial<Pick<WebhookDeliveryRow,
  'status' | 'attempts_made' | 'next_attempt_at' | 'lease_until' | 'lease_owner' | 'replay' | 'last_status_code' | 'last_error' | 'updated_at'>>;

export interface WebhooksRepo {
  insertEndpoint(row: WebhookEndpointRow): Promise<void>;
  endpoint(teamId: string, id: string): Promise<WebhookEndpointRow | undefined>;
  endpointById(id: string): Promise<WebhookEndpointRow | undefined>;
  listEndpoints(teamId: string, page: PageQuery): Promise<Page<WebhookEndpointRow>>;
  updateEndpoint(teamId: string, id: string, patch: EndpointPatch): Promise<boolean>;
  /** Removes the endpoint with its messages and attempts. */
  deleteEndpoint(teamId: string, id: string): Promise<boolean>;
  enabledEndpointsOf(teamIds: readonly string[]): Promise<WebhookEndpointRow[]>;
  /** The highest outbox sequence number written so far (0 when empty). */
  lastEventSeq(): Promise<number>;

  /** Inserts messages; one that exists for the same (endpoint, event) is left alone. */
  insertDeliveries(rows: WebhookDeliveryRow[]): Promise<void>;
  delivery(endpointId: string, id: string): Promise<WebhookDeliveryRow | undefined>;
  listDeliveries(endpointId: string, page: PageQuery): Promise<Page<WebhookDeliveryRow>>;
  /** Endpoints with a message due now (or a claim whose lease ran out). */
  dueEndpointIds(now: string, limit: number): Promise<string[]>;
  /**
   * Claims up to `limit` due messages of one endpoint for `owner` until `leaseUntil`; lapsed claims
   * of a dead process first unless `dueOnly`.
   */
  claim(endpointId: string, now: string, owner: string, leaseUntil: string, limit: number, dueOnly?: boolean): Promise<WebhookDeliveryRow[]>;
  /** Updates a message only while `owner` holds its claim. */
  finishClaimed(id: string, owner: string, patch: DeliveryPatch): Promise<boolean>;
  updateDelivery(id: string, patch: DeliveryPatch): Promise<boolean>;
  /** Fails every message of the endpoint still waiting (the endpoint was disabled). */
  failWaiting(endpointId: string, reason: string, at: string): Promise<number>;

  /** Deletes up to `limit` finished messages last changed before `before`, with their attempts. */
  pruneFinished(before: string, limit: number): Promise<number>;

  insertAttempt(row: WebhookAttemptRow): Promise<void>;
  listAttempts(endpointId: string, deliveryId: string | undefined, page: PageQuery): Promise<Page<WebhookAttemptRow>>;

  cursor(name: string): Promise<number>;
  setCursor(name: string, seq: number): Promise<void>;
}

export function webhooksRepo(db: Db): WebhooksRepo {
  return {
    async insertEndpoint(row) {
      await db.insertInto('webhook_endpoints').values(row).execute();
    },
    endpoint: (teamId, id) =>
      db.selectFrom('webhook_endpoints').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    endpointById: (id) => db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst(),
    listEndpoints: (teamId, page) => paginate(db, db.selectFrom('webhook_endpoints').selectAll().where('team_id', '=', teamId), 'id', page),
    async updateEndpoint(teamId, id, patch) {
      const r = await db.updateTable('webhook_endpoints').set(patch).where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async deleteEndpoint(teamId, id) {
      const r = await db.deleteFrom('webhook_endpoints').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
      if (r.numDeletedRows === 0n) return false;
      await db.deleteFrom('webhook_attempts').where('endpoint_id', '=', id).execute();
      await db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
      return true;
    },
    enabledEndpointsOf: (teamIds) => teamIds.length === 0
      ? Promise.resolve([])
      : db.selectFrom('webhook_endpoints').selectAll().where('team_id', 'in', [...teamIds]).where('status', '=', 'enabled').execute(),
    async lastEventSeq() {
      const row = await db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
      return Number(row?.seq ?? 0);
    },

    async insertDeliveries(rows) {
      // In slices: SQLite caps the bound values of one statement.
      for (let i = 0; i < rows.length; i += 500) {
        await db.insertInto('webhook_deliveries').values(rows.slice(i, i + 500))
          .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing()).execute();
      }
    },
    delivery: (endpointId, id) =>
      db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).where('id', '=', id).executeTakeFirst(),
    listDeliveries: (endpointId, page) => paginate(db, db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId), 'id', page),
    async dueEndpointIds(now, limit) {
      // Per enabled endpoint, two index probes: cheap however many messages wait.
      const rows = await db.selectFrom('webhook_endpoints as e').select('e.id').where('e.status', '=', 'enabled')
        .where((eb) => eb.or([
          eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id')
            .whereRef('d.endpoint_id', '=', 'e.id').where('d.status', '=', 'pending').where('d.next_attempt_at', '<=', now)),
          eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id')
            .whereRef('d.endpoint_id', '=', 'e.id').where('d.status', '=', 'delivering').where('d.lease_until', '<', now)),
        ]))
        .limit(limit).execute();
      return rows.map((r) => r.id);
    },
    async claim(endpointId, now, owner, leaseUntil, limit, dueOnly = false) {
      const set = { status: 'delivering', lease_owner: owner, lease_until: leaseUntil, updated_at: now };
      // Two dispatchers (two processes on one PostgreSQL) must not claim the same message: the
      // claim every leased queue makes (sql/lease-claim.ts).
      const claimRows = (chosen: typeof lapsedQuery, status: 'delivering' | 'pending') =>
        claimLeased<WebhookDeliveryRow>(db, { table: 'webhook_deliveries', chosen, set, still: { column: 'status', values: [status] } });
      // Lapsed claims of a process that died first (looked for with a read: writing costs an fsync),
      // then due messages in due order.
      const lapsedQuery = db.selectFrom('webhook_deliveries').select('id')
        .where('endpoint_id', '=', endpointId).where('status', '=', 'delivering').where('lease_until', '<', now)
        .orderBy('lease_until').limit(limit);
      const lapsed = dueOnly || (await lapsedQuery.executeTakeFirst()) === undefined ? [] : await claimRows(lapsedQuery, 'delivering');
      if (lapsed.length >= limit) return lapsed;
      const due = await claimRows(db.selectFrom('webhook_deliveries').select('id')
        .where('endpoint_id', '=', endpointId).where('status', '=', 'pending').where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at').orderBy('id').limit(limit - lapsed.length), 'pending');
      return [...lapsed, ...due];
    },
    async finishClaimed(id, owner, patch) {
      const r = await db.updateTable('webhook_deliveries').set(patch)
        .where('id', '=', id).where('status', '=', 'delivering').where('lease_owner', '=', owner).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async updateDelivery(id, patch) {
      const r = await db.updateTable('webhook_deliveries').set(patch).where('id', '=', id).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async failWaiting(endpointId, reason, at) {
      const r = await db.updateTable('webhook_deliveries')
        .set({ status: 'failed', next_attempt_at: null, last_error: reason, updated_at: at })
        .where('endpoint_id', '=', endpointId).where('status', '=', 'pending').executeTakeFirst();
      return Number(r.numUpdatedRows);
    },

    async pruneFinished(before, limit) {
      const ids = (await db.selectFrom('webhook_deliveries').select('id')
        .where('status', 'in', ['succeeded', 'failed']).where('updated_at', '<', before).limit(limit).execute()).map((r) => r.id);
      if (ids.length === 0) return 0;
      await db.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
      await db.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
      return ids.length;
    },
    async insertAttempt(row) {
      await db.insertInto('webhook_attempts').values(row).execute();
    },
    listAttempts(endpointId, deliveryId, page) {
      let q = db.selectFrom('webhook_attempts').selectAll().where('endpoint_id', '=', endpointId);
      if (deliveryId !== undefined) q = q.where('delivery_id', '=', deliveryId);
      return paginate(db, q, 'id', page);
    },

    async cursor(name) {
      const row = await db.selectFrom('outbox_cursors').select('seq').where('name', '=', name).executeTakeFirst();
      return row?.seq ?? 0;
    },
    async setCursor(name, seq) {
      await db.insertInto('outbox_cursors').values({ name, seq }).onConflict((oc) => oc.column('name').doUpdateSet({ seq })).execute();
    },
  };
}
