import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkSizesFor, inWriteTransaction, openDatabase, type Database } from '../../storage/sql/index.js';
import { broadcastsRepo, emailsRepo, type EmailRow } from '../../storage/repos/index.js';
import { createTestDatabase } from '../helpers/postgres.js';

// An email's rows (and a campaign page's: emails, recipients, broadcast recipients) go in chunked
// multi-row INSERTs compiled once (sql/chunked.ts). However many rows come, no statement reaches
// SQLite's bound-variable limit (32,766 in this build, 999 in older ones); rows of different
// shapes (a campaign's email carries broadcast_id, the API's does not) are stored as given, on
// SQLite (inside a write transaction: the raw path) and on PostgreSQL alike.
const dir = mkdtempSync(join(tmpdir(), 'svc-email-rows-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const at = '2026-11-22T00:00:00.000Z';

const email = (id: string): EmailRow => ({
  id, team_id: 'team-1', api_key_id: null, domain_id: 'domain-1', region: 'us-east-1',
  from_header: 'a@sender.net', from_email: 'a@sender.net', to_json: '[]', cc_json: null, bcc_json: null, reply_to_json: null,
  subject: 's', html: null, text: 't', headers_json: null, tags_json: null, topic_id: null, template_id: null, template_version: null,
  message_id: `<${id}@sender.net>`, scheduled_at: null, status: 'dispatched', last_event: 'queued', recipients_text: '',
  recipient_count: 0, content_hash: 'h', has_unsubscribe: 0, attachment_count: 0, created_at: at, updated_at: at,
});

t.test('chunk sizes: powers of two down to 1, none binding more than 999 values', async (t) => {
  for (const columns of [1, 4, 8, 18, 32, 999, 2000]) {
    const sizes = chunkSizesFor(columns);
    t.equal(sizes.at(-1), 1);
    t.ok(sizes.every((s, i) => i === 0 || s * 2 === sizes[i - 1]), `${columns} columns: halving sizes`);
    t.ok(sizes[0]! * columns <= 999 || sizes[0] === 1, `${columns} columns: ${sizes[0]} rows a statement at most`);
    t.ok(sizes[0]! <= 256);
  }
});

async function rowsStored(t: Test, database: Database): Promise<void> {
  const db = database.db;
  await t.test('an email with 20,000 tags (80,000 bound values) is stored whole', async (t) => {
    const id = 'email-many-tags';
    const tags = Array.from({ length: 20_000 }, (_, i) => ({ email_id: id, team_id: 'team-1', name: `t${i}`, value: 'v' }));
    await emailsRepo(db).insertAccepted({ email: email(id), recipients: [], tags, attachments: [] });
    t.equal((await emailsRepo(db).tags(id)).length, 20_000);
  });

  await t.test('a page of 301 emails of two shapes, their recipients and broadcast rows, stored as given', async (t) => {
    const ids = Array.from({ length: 301 }, (_, i) => `page-${String(i).padStart(4, '0')}`);
    const accepted = ids.map((id, i) => {
      const row: EmailRow = { ...email(id), text: `body ${i}`, recipient_count: 1 };
      // Every third from a broadcast; the others leave broadcast_id out (one of them as undefined).
      if (i % 3 === 0) row.broadcast_id = 'b-1';
      if (i === 1) row.broadcast_id = undefined;
      return {
        email: row, tags: [], attachments: [],
        recipients: [{
          id: `${id}.0`, email_id: id, team_id: 'team-1', region: 'us-east-1', idx: 0, address: `r${i}@x.net`, domain: 'x.net',
          kind: 'to' as const, state: 'queued' as const, attempts: 0, next_attempt_at: at, first_attempt_at: null, submitted_at: null,
          expires_at: null, last_response: null, bounce_type: null, bounce_sub_type: null, updated_at: at,
        }],
      };
    });
    const recipients = ids.map((id, i) => ({
      broadcast_id: 'b-1', contact_id: `c-${i}`, team_id: 'team-1', email: `r${i}@x.net`, status: 'sent' as const, reason: null, email_id: id, created_at: at,
    }));
    await inWriteTransaction(db, async (trx) => {
      await emailsRepo(trx).insertAcceptedMany(accepted);
      await broadcastsRepo(trx).insertRecipients(recipients);
    });
    for (const i of [0, 1, 2, 150, 299, 300]) {
      const stored = await emailsRepo(db).byId('team-1', ids[i]!);
      t.equal(stored?.text, `body ${i}`, `email ${i}`);
      t.equal(stored?.broadcast_id ?? null, i % 3 === 0 ? 'b-1' : null, `email ${i}: broadcast_id`);
      t.equal(Number(stored?.attachment_count), 0);
      const [recipient] = await emailsRepo(db).recipients(ids[i]!);
      t.equal(recipient?.address, `r${i}@x.net`);
      t.equal(Number(recipient?.idx), 0);
    }
    const count = await db.selectFrom('broadcast_recipients').select((eb) => eb.fn.countAll().as('n')).where('broadcast_id', '=', 'b-1').executeTakeFirst();
    t.equal(Number(count?.n), 301);
    const last = await db.selectFrom('broadcast_recipients').selectAll().where('contact_id', '=', 'c-300').executeTakeFirst();
    t.same({ email: last?.email, email_id: last?.email_id, reason: last?.reason }, { email: 'r300@x.net', email_id: ids[300], reason: null });
  });

  await t.test('the bulk rule counts only emails without an unsubscribe link', async (t) => {
    await emailsRepo(db).insertAccepted({ email: { ...email('bulk-1'), content_hash: 'bulk-h', recipient_count: 3 }, recipients: [], tags: [], attachments: [] });
    await emailsRepo(db).insertAccepted({ email: { ...email('bulk-2'), content_hash: 'bulk-h', recipient_count: 5, has_unsubscribe: 1 }, recipients: [], tags: [], attachments: [] });
    t.equal(await emailsRepo(db).bulkRecipients('team-1', 'bulk-h', at), 3);
  });
}

t.test('SQLite', async (t) => {
  const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
  t.teardown(() => database.close());
  await rowsStored(t, database);

  await t.test('the bulk rule reads the partial index of emails without an unsubscribe link (migration 032)', async (t) => {
    // The same conditions as repos/emails.ts bulkRecipients, has_unsubscribe as a literal.
    const plan = database.sqlite.prepare('explain query plan select coalesce(sum(recipient_count), 0) from emails where team_id = ? and ' +
      "content_hash = ? and created_at >= ? and has_unsubscribe = 0 and status != ?").all('team-1', 'h', at, 'canceled') as { detail: string }[];
    t.match(plan.map((p) => p.detail).join('\n'), /USING INDEX emails_bulk_counted/);
  });
});

t.test('PostgreSQL', async (t) => {
  const pg = await createTestDatabase();
  const database = await openDatabase({ url: pg.url, path: '/nonexistent/svc.sqlite', synchronous: 'FULL' });
  t.teardown(async () => { await database.close(); await pg.drop(); });
  t.equal(database.kind, 'postgres');
  await rowsStored(t, database);
});
