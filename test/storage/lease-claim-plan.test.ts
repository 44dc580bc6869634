import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../../core/ids.js';
import { claimDueRecipients, emailsRepo, workRepo } from '../../storage/repos/index.js';
import { inRelaxedWriteTransaction, openDatabase } from '../../storage/sql/index.js';
import { emailRow, iso, recipientRow } from '../helpers/pg-rows.js';

// On SQLite a lease claim is `UPDATE … WHERE id IN (chosen) AND state IN (…)`. With an index on the
// state column the planner walked every row of that state (each queued recipient of a large
// broadcast) and tested it against the chosen ids: about 2 ms a claim with 30,000 queued. The claim
// must look its chosen rows up by id. Checked on the statements the claims really prepare.

const dir = mkdtempSync(join(tmpdir(), 'svc-claim-plan-'));
const database = await openDatabase({ url: '', path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
t.teardown(async () => { await database.close(); rmSync(dir, { recursive: true, force: true }); });

// Every statement text prepared on the handle, as the raw path prepares each text once.
const prepared: string[] = [];
const prepare = database.sqlite.prepare.bind(database.sqlite);
database.sqlite.prepare = ((text: string) => { prepared.push(text); return prepare(text); }) as typeof database.sqlite.prepare;

/** The plan of the one claim statement prepared since `from` that writes `lease_owner`. */
function claimPlan(t: Test, from: number, table: string): string[] {
  const claims = prepared.slice(from).filter((text) => text.startsWith(`update "${table}"`) && text.includes('"lease_owner"'));
  t.equal(claims.length, 1, `one claim statement on ${table} was prepared`);
  const text = claims[0]!;
  const parameters = (text.match(/\?/g) ?? []).map(() => '0');
  const plan = prepare(`explain query plan ${text}`).all(...parameters) as { detail: string }[];
  return plan.map((row) => row.detail);
}

t.test('the outbound claim looks its chosen recipients up by id, not through the state index', async (t) => {
  const email = emailRow(newId(), { region: 'plan-region' });
  const rows = Array.from({ length: 50 }, (_, i) => recipientRow(email, i));
  await emailsRepo(database.db).insertAccepted({ email, recipients: rows, tags: [], attachments: [] });
  const from = prepared.length;
  const lease = { owner: 'node-a', until: iso(Date.now() + 60_000) };
  const claimed = await inRelaxedWriteTransaction(database.db, (trx) => claimDueRecipients(trx, ['plan-region'], iso(), lease, 5, [rows[0]!.id]));
  t.equal(claimed.length, 5, 'the claim itself still works');
  t.notOk(claimed.some((r) => r.id === rows[0]!.id), 'the passed-over row stays out');
  const plan = claimPlan(t, from, 'email_recipients');
  t.match(plan[0], /^SEARCH email_recipients USING INDEX sqlite_autoindex_email_recipients_1 \(id=\?\)$/, `the update finds rows by id (${plan.join(' | ')})`);
  t.notOk(plan.some((line) => line.includes('email_recipients_state')), 'the state index is not walked');
});

t.test('the durable work claim looks its chosen items up by id', async (t) => {
  const repo = workRepo(database.db);
  const now = iso();
  for (let i = 0; i < 5; i++) {
    await repo.add({ id: newId(), kind: 'plan-kind', key: `k${i}`, team_id: null, due_at: now, payload: '{}', created_at: now });
  }
  const from = prepared.length;
  const claimed = await inRelaxedWriteTransaction(database.db, (trx) => workRepo(trx).claim(['plan-kind'], iso(Date.now() + 1000), 'node-a', iso(Date.now() + 60_000), 3));
  t.equal(claimed.length, 3, 'the claim itself still works');
  const plan = claimPlan(t, from, 'work_items');
  t.match(plan[0], /^SEARCH work_items USING INDEX sqlite_autoindex_work_items_1 \(id=\?\)$/, `the update finds items by id (${plan.join(' | ')})`);
});
