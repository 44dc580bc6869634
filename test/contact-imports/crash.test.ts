import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { explicitMembership } from '../../core/segments/index.js';
import { contactImportsService, contactImportWork, threadedBatchReader } from '../../core/contact-imports/index.js';
import { consentHasher } from '../../core/contacts/index.js';
import { durableWorker } from '../../core/work/index.js';
import { importFiles } from '../../storage/files/index.js';
import { openDatabase, type Db } from '../../storage/sql/index.js';
import { eventWithin, exitWithin, waitFor } from '../helpers/deadline.js';

// kill -9 mid-import: a child process works an import of 20,000 rows (new addresses, addresses
// twice, unusable ones, a property) and is killed five times at set shares of the work, then
// started again. Every step's rows commit with the worker's cursor, so at the end each count is
// exact and each contact exists once, with one consent record and one platform event.
const dir = mkdtempSync(join(tmpdir(), 'svc-import-crash-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const silent = pino({ level: 'silent' });
const ROWS = 20_000;

/** Row i: every 10th repeats the address of row i - 5 (an update), every 25th is unusable. */
function csvOf(rows: number): { text: string; unique: number; repeats: number; bad: number } {
  const lines = ['email,plan,"note, quoted"'];
  let unique = 0, repeats = 0, bad = 0;
  for (let i = 0; i < rows; i++) {
    if (i % 25 === 24) { lines.push(`not an address ${i},x,y`); bad++; }
    else if (i % 10 === 9 && (i - 5) % 25 !== 24) { lines.push(`person${i - 5}@example.com,plan${i},"again\nrow ${i}"`); repeats++; }
    else { lines.push(`person${i}@example.com,plan${i},"first\r\nrow ${i}"`); unique++; }
  }
  return { text: lines.join('\r\n') + '\r\n', unique, repeats, bad };
}

async function count(db: Db, table: 'contacts' | 'consent_records' | 'platform_events' | 'contact_property_values' | 'contact_import_failures'): Promise<number> {
  const row = await db.selectFrom(table).select(({ fn }) => fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

t.test('kill -9 five times mid-import: counts exact, each contact once', async (t) => {
  const path = join(dir, 'crash.sqlite');
  const folder = join(dir, 'imports');
  const database = await openDatabase({ path, synchronous: 'FULL' });
  t.teardown(() => database.close());
  const db = database.db;
  const files = importFiles(folder);
  const clock = { now: () => new Date() };
  const reader = threadedBatchReader(folder);
  t.teardown(() => reader.close());
  const handler = contactImportWork({ db, clock, logger: silent, reader, hash: consentHasher(Buffer.alloc(32, 7)), contactLimit: async () => 0, segments: explicitMembership(db), batchRows: 250, batchBytes: 1 << 22 });
  const seeder = durableWorker({ db, clock, logger: silent, handlers: [handler], leaseMs: 400, concurrency: 1, stepsPerTurn: 1 });
  const service = contactImportsService({ db, clock, logger: silent, files, work: seeder, contactLimit: async () => 0, segments: explicitMembership(db) });
  const csv = csvOf(ROWS);
  const upload = await service.startUpload();
  upload.stream.end(csv.text);
  const created = await service.create('crash-team', upload, { on_conflict: 'upsert', column_map: JSON.stringify({ email: 'email', properties: { plan: 'plan', note: 'note, quoted' } }) },
    { apiKeyId: null, ip: null, userAgent: null, fileName: 'crash.csv' });
  const progress = async () => Number((await db.selectFrom('contact_imports').select('total').where('id', '=', created.id).executeTakeFirstOrThrow()).total);
  const child = join(import.meta.dirname, '../helpers/import-child.js');
  const start = async (): Promise<ChildProcess> => {
    const proc = spawn(process.execPath, [child, path, folder, '400', '250'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = await eventWithin<[Buffer]>('the import child to start', proc.stdout!, 'data');
    t.match(String(line), /ready/);
    return proc;
  };
  for (let kill = 1; kill <= 5; kill += 1) {
    const proc = await start();
    const target = Math.floor((ROWS * kill) / 7);
    await waitFor(`the import to pass row ${target}`, async () => (await progress()) >= target, 60_000, 5);
    const exited = exitWithin('the killed import child to exit', proc);
    proc.kill('SIGKILL');
    await exited;
  }
  t.ok((await progress()) < ROWS, `rows remained after the fifth kill (${await progress()} of ${ROWS})`);
  const last = await start();
  t.teardown(() => { last.kill('SIGKILL'); });
  const done = await waitFor('the import to complete after the kills', async () => {
    const row = await db.selectFrom('contact_imports').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    return row.status === 'completed' ? row : undefined;
  }, 60_000);
  t.match(done, { total: ROWS, created: csv.unique, updated: csv.repeats, skipped: 0, failed: csv.bad });
  t.equal(await count(db, 'contacts'), csv.unique, 'each address once');
  t.equal(await count(db, 'consent_records'), csv.unique, 'one consent record per new contact');
  t.equal(await count(db, 'platform_events'), csv.unique, 'one svc:contact.created per new contact');
  t.equal(await count(db, 'contact_property_values'), csv.unique * 2, 'two values per contact');
  t.equal(await count(db, 'contact_import_failures'), csv.bad);
  const sample = await db.selectFrom('contact_property_values').select('text_value').where('key', '=', 'note').where('contact_id', '=',
    (await db.selectFrom('contacts').select('id').where('email_key', '=', 'person4@example.com').executeTakeFirstOrThrow()).id).executeTakeFirstOrThrow();
  t.equal(sample.text_value, 'again\nrow 9', 'the repeat row updated the contact, quoted newline and all');
});
