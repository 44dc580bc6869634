import { sql } from 'kysely';
import { shapedRows } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import { likeOperator } from '../sql/dialect.js';
import { containsPattern, paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { SuppressionOrigin, SuppressionRow } from './suppressions-tables.js';

export type { SuppressionOrigin, SuppressionRow };

export interface SuppressionFilter {
  origin?: SuppressionOrigin;
  /** Already lower-cased; matched inside the lower-cased address. */
  search?: string;
  /** Inclusive bounds on created_at (ISO 8601 UTC text). */
  startDate?: string;
  endDate?: string;
}

export interface SuppressionsRepo {
  /** Inserts unless the team already suppresses the address; answers whether it inserted. */
  insertIfAbsent(row: SuppressionRow): Promise<boolean>;
  byId(teamId: string, id: string): Promise<SuppressionRow | undefined>;
  /** By the lower-cased whole address. */
  byEmailKey(teamId: string, emailKey: string): Promise<SuppressionRow | undefined>;
  /** The listed ones among these lower-cased addresses (a campaign page's, read at once). */
  byEmailKeys(teamId: string, emailKeys: readonly string[]): Promise<SuppressionRow[]>;
  list(teamId: string, filter: SuppressionFilter, page: PageQuery): Promise<Page<SuppressionRow>>;
  delete(teamId: string, id: string): Promise<boolean>;
}

export function suppressionsRepo(db: Db): SuppressionsRepo {
  return {
    async insertIfAbsent(row) {
      const result = await db.insertInto('suppressions').values(row)
        .onConflict((oc) => oc.columns(['team_id', 'email_key']).doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    byId: (teamId, id) =>
      db.selectFrom('suppressions').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    // Compiled once: every recipient of every send is looked up.
    byEmailKey: async (teamId, emailKey) => (await shapedRows<SuppressionRow>(db, 'suppressions.byEmailKey', (m) => db
      .selectFrom('suppressions').selectAll().where('team_id', '=', m('team')).where('email_key', '=', m('key')), { team: teamId, key: emailKey }))[0],
    async byEmailKeys(teamId, emailKeys) {
      const rows: SuppressionRow[] = [];
      for (let i = 0; i < emailKeys.length; i += 500) {
        rows.push(...await db.selectFrom('suppressions').selectAll().where('team_id', '=', teamId).where('email_key', 'in', emailKeys.slice(i, i + 500)).execute());
      }
      return rows;
    },
    list(teamId, filter, page) {
      let q = db.selectFrom('suppressions').selectAll().where('team_id', '=', teamId);
      if (filter.origin !== undefined) q = q.where('origin', '=', filter.origin);
      if (filter.search !== undefined) q = q.where(sql<boolean>`email_key ${sql.raw(likeOperator(db))} ${containsPattern(filter.search)} escape '\\'`);
      if (filter.startDate !== undefined) q = q.where('created_at', '>=', filter.startDate);
      if (filter.endDate !== undefined) q = q.where('created_at', '<=', filter.endDate);
      return paginate(db, q, 'id', page);
    },
    async delete(teamId, id) {
      const result = await db.deleteFrom('suppressions').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
