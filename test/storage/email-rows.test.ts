import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../storage/sql/index.js';
import { emailsRepo, rowChunks, type EmailRow } from '../../storage/repos/index.js';

// An email's recipient and tag rows go in multi-row INSERTs. However many rows an email brings,
// no statement reaches SQLite's bound-variable limit (32,766 in this build, 999 in older ones):
// the API's caps keep the counts small, the storage does not rely on them.
const dir = mkdtempSync(join(tmpdir(), 'svc-email-rows-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
t.teardown(() => database.close());
const db = database.db;
const at = '2026-11-22T00:00:00.000Z';

const email = (id: string): EmailRow => ({
  id, team_id: 'team-1', api_key_id: null, domain_id: 'domain-1', region: 'us-east-1',
  from_header: 'a@sender.net', from_email: 'a@sender.net', to_json: '[]', cc_json: null, bcc_json: null, reply_to_json: null,
  subject: 's', html: null, text: 't', headers_json: null, tags_json: null, topic_id: null, template_id: null, template_version: null,
  message_id: `<${id}@sender.net>`, scheduled_at: null, status: 'dispatched', last_event: 'queued', recipients_text: '',
  recipient_count: 0, content_hash: 'h', has_unsubscribe: 0, attachment_count: 0, created_at: at, updated_at: at,
});

t.test('rows are split so no statement binds more than 999 values', async (t) => {
  const rows = Array.from({ length: 1000 }, (_, i) => ({ a: i, b: i, c: i, d: i }));
  const chunks = rowChunks(rows);
  t.equal(chunks.length, 5, '249 rows of 4 values per statement');
  t.ok(chunks.every((c) => c.length * 4 <= 999));
  t.same(chunks.flat(), rows, 'every row once, in order');
  t.same(rowChunks([]), []);
});

t.test('an email with 20,000 tags (80,000 bound values) is stored whole', async (t) => {
  const id = 'email-many-tags';
  const tags = Array.from({ length: 20_000 }, (_, i) => ({ email_id: id, team_id: 'team-1', name: `t${i}`, value: 'v' }));
  await emailsRepo(db).insertAccepted({ email: email(id), recipients: [], tags, attachments: [] });
  t.equal((await emailsRepo(db).tags(id)).length, 20_000);
});
