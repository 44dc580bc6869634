import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { runImport, uploadImport } from '../helpers/contact-imports.js';
import { call, CALL_TIMEOUT_MS } from '../helpers/http.js';

// The limits of contact imports: the plan's contact limit (rows past it failed, an upload at it
// refused), the 50 MB file (streamed, refused, nothing left on disk) and the first thousand
// failures kept.
const app = await startTestAppliance({ roles: ['api', 'jobs'], env: { SVC_WORK_POLL_MS: '50', SVC_CONTACTS_LIMIT: '5' } });
t.teardown(() => app.stop());
const base = app.baseUrl;
const importsDir = join(app.config.data_dir, 'imports');

t.test('contact limit: rows past it are failed with their row numbers; an upload at it is refused', async (t) => {
  const { token } = await app.newTeam('Limited');
  await call(base, 'POST', '/contacts', { token, body: { email: 'first@example.com' } });
  const rows = ['email', 'first@example.com', ...Array.from({ length: 6 }, (_, i) => `n${i}@example.com`)].join('\n');
  const done = await runImport(base, token, rows, { on_conflict: 'upsert' });
  t.match(done.counts, { total: 7, created: 4, updated: 1, failed: 2 });
  const failures = (await call(base, 'GET', `/contacts/imports/${done.id}/failures`, { token })).body.data;
  t.same(failures, [
    { row_number: 6, email: 'n4@example.com', reason: 'Contact limit reached.' },
    { row_number: 7, email: 'n5@example.com', reason: 'Contact limit reached.' },
  ]);
  const refused = await uploadImport(base, token, 'email\nlate@example.com\n');
  t.equal(refused.status, 422);
  t.same([refused.body.name, refused.body.message], ['validation_error', 'Contact limit reached.']);
});

t.test('the first thousand failures are kept, every one is counted', async (t) => {
  const { token } = await app.newTeam('Many failures');
  const rows = ['email', ...Array.from({ length: 1500 }, (_, i) => `bad-${i}`)].join('\n');
  const done = await runImport(base, token, rows);
  t.match(done, { status: 'completed', counts: { total: 1500, failed: 1500, created: 0 } });
  const failures = (await call(base, 'GET', `/contacts/imports/${done.id}/failures`, { token })).body;
  t.equal(failures.data.length, 1000);
  t.same([failures.data[0].row_number, failures.data[999].row_number], [1, 1000]);
});

t.test('a file over 50 MB is refused while it streams in, and nothing is left on disk', async (t) => {
  const { token } = await app.newTeam('Too large');
  const boundary = 'svc-test-boundary';
  const head = Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.csv"\r\ncontent-type: text/csv\r\n\r\nemail\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const line = Buffer.from('someone.with.a.long.address@example.com\n'.repeat(1600));
  const total = 51 * 1024 * 1024;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === 0) controller.enqueue(head);
      if (sent >= total) {
        controller.enqueue(tail);
        controller.close();
        return;
      }
      controller.enqueue(line);
      sent += line.length;
    },
  });
  const res = await fetch(`${base}/contacts/imports`, {
    method: 'POST', body, duplex: 'half', signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    headers: { authorization: `Bearer ${token}`, 'user-agent': 'svc-tests/1.0', 'content-type': `multipart/form-data; boundary=${boundary}` },
  } as RequestInit);
  const answer = await res.json() as { name: string; errors: { path: string }[] };
  t.equal(res.status, 422);
  t.equal(answer.name, 'validation_error');
  t.equal(answer.errors[0]!.path, 'file');
  t.ok(sent >= total, 'the whole body was read (and thrown away), not answered mid-stream');
  t.same(readdirSync(importsDir).filter((f) => f.endsWith('.csv')).length, 2, 'only the two imports above keep files');
  t.same((await call(base, 'GET', '/contacts/imports', { token })).body.data, []);
});
