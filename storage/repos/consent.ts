import { shapedStatement } from '../sql/compiled.js';
import type { Db } from '../sql/db.js';
import type { ConsentRecordRow } from './contacts-tables.js';

export type { ConsentRecordRow };

// The consent trail: kept three years, even after erasure (it holds a hash, never the address).

export interface ConsentRepo {
  insert(row: ConsentRecordRow): Promise<void>;
  /** Erasure: the contact's records keep only their address hash. Answers how many. */
  detachContact(teamId: string, contactId: string): Promise<number>;
  /** A contact's records, oldest first. */
  ofContact(teamId: string, contactId: string): Promise<ConsentRecordRow[]>;
  /** An erased contact's records under its address hash, oldest first (the proof of an opt-out). */
  ofHash(teamId: string, emailHash: string): Promise<ConsentRecordRow[]>;
}

const consentColumns: readonly (keyof ConsentRecordRow)[] = [
  'id', 'team_id', 'contact_id', 'email_hash', 'kind', 'topic_id', 'value', 'source', 'ip', 'user_agent', 'created_at',
];

export function consentRepo(db: Db): ConsentRepo {
  return {
    // Compiled once: the delivery path writes one with each contact it adds from sends.
    async insert(row) {
      const insert = shapedStatement(db, 'consent_records.insert', (m) => db.insertInto('consent_records')
        .values(Object.fromEntries(consentColumns.map((c) => [c, m(c)])) as unknown as ConsentRecordRow));
      await insert(db, row as unknown as Record<string, unknown>);
    },
    async detachContact(teamId, contactId) {
      const r = await db.updateTable('consent_records').set({ contact_id: null })
        .where('contact_id', '=', contactId).where('team_id', '=', teamId).executeTakeFirst();
      return Number(r.numUpdatedRows);
    },
    ofContact: (teamId, contactId) => db.selectFrom('consent_records').selectAll()
      .where('contact_id', '=', contactId).where('team_id', '=', teamId).orderBy('id').execute(),
    ofHash: (teamId, emailHash) => db.selectFrom('consent_records').selectAll()
      .where('team_id', '=', teamId).where('email_hash', '=', emailHash).where('contact_id', 'is', null)
      .orderBy('id').execute(),
  };
}
