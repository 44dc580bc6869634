import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../../core/ids.js';
import { changeRecipient, claimDueRecipients, claimLapsedSubmissions, emailsRepo, renewRecipientLeases } from '../../storage/repos/index.js';
import { inRelaxedWriteTransaction, openDatabase, paddedLength, type Database, type Db } from '../../storage/sql/index.js';
import { emailRow, iso, openPgFixture, recipientRow } from '../helpers/pg-rows.js';

// The claim several outbound processes make on one region's queue (storage/repos/emails-queue.ts
// over storage/sql/lease-claim.ts): two claimers never get the same recipient, a lapsed lease is
// taken over and the old owner's writes are then refused, held rows are never claimed, and a
// submission is recovered only once its process's lease lapsed. On SQLite (two connections to one
// file, as two processes on one box) and on a real PostgreSQL (two pools, as two nodes).

interface Engine { name: string; first: Db; second: Db; close(): Promise<void> }

async function sqliteEngine(): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lease-'));
  const open = () => openDatabase({ url: '', path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
  const a = await open();
  const b = await open();
  return { name: 'sqlite', first: a.db, second: b.db, async close() { await a.close(); await b.close(); rmSync(dir, { recursive: true, force: true }); } };
}

async function postgresEngine(): Promise<Engine> {
  const fixture = await openPgFixture();
  const other: Database = await fixture.other();
  return { name: 'postgres', first: fixture.database.db, second: other.db, close: () => fixture.close() };
}

async function queueOf(db: Db, region: string, count: number, extra: Parameters<typeof recipientRow>[2] = {}): Promise<string[]> {
  const email = emailRow(newId(), { region });
  const rows = Array.from({ length: count }, (_, i) => recipientRow(email, i, extra));
  await emailsRepo(db).insertAccepted({ email, recipients: rows, tags: [], attachments: [] });
  return rows.map((r) => r.id);
}

const lease = (owner: string, ms = 60_000, from = Date.now()) => ({ owner, until: iso(from + ms) });
const claim = (db: Db, region: string, owner: string, limit: number, now = iso(), ms = 60_000) =>
  inRelaxedWriteTransaction(db, (trx) => claimDueRecipients(trx, [region], now, lease(owner, ms, Date.parse(now)), limit));

const engines = [await sqliteEngine(), await postgresEngine()];
t.teardown(async () => { for (const engine of engines) await engine.close(); });

for (const engine of engines) {

  t.test(`${engine.name}: two claimers at once never get the same recipient, and together get them all`, async (t) => {
    const region = `claim-${newId()}`;
    const ids = await queueOf(engine.first, region, 300);
    // Rounds of one claim from each at once, until both come back empty.
    const a: string[] = [];
    const b: string[] = [];
    for (;;) {
      const [ra, rb] = await Promise.all([claim(engine.first, region, 'node-a', 7), claim(engine.second, region, 'node-b', 7)]);
      for (const r of ra) t.equal(r.lease_owner, 'node-a');
      for (const r of rb) t.equal(r.lease_owner, 'node-b');
      a.push(...ra.map((r) => r.id));
      b.push(...rb.map((r) => r.id));
      if (ra.length === 0 && rb.length === 0) break;
    }
    const overlap = a.filter((id) => b.includes(id));
    t.same(overlap, [], 'no recipient claimed twice');
    t.equal(new Set([...a, ...b]).size, ids.length, 'every recipient claimed once');
    t.ok(a.length > 0 && b.length > 0, `both claimers took some (${a.length} and ${b.length})`);
  });

  t.test(`${engine.name}: a lapsed lease is taken over; the old owner's writes are then refused`, async (t) => {
    const region = `lapse-${newId()}`;
    const [id] = await queueOf(engine.first, region, 1);
    const t0 = Date.now();
    const first = await claim(engine.first, region, 'node-a', 10, iso(t0), 1000);
    t.same(first.map((r) => r.id), [id]);
    t.same(await claim(engine.second, region, 'node-b', 10, iso(t0 + 500)), [], 'not while the lease lasts');
    const taken = await claim(engine.second, region, 'node-b', 10, iso(t0 + 2000));
    t.same(taken.map((r) => r.id), [id], 'taken over once it lapsed');
    const submitting = { state: 'submitting' as const, submitted_at: iso() };
    t.notOk(await changeRecipient(engine.first, id!, ['queued'], submitting, iso(), 'node-a'), 'the old owner cannot mark it submitting');
    t.same(await renewRecipientLeases(engine.first, [id!], lease('node-a')), [], 'nor renew its lease');
    t.ok(await changeRecipient(engine.second, id!, ['queued'], submitting, iso(), 'node-b'), 'the new owner can');
  });

  t.test(`${engine.name}: rows passed over are not claimed, whatever their count, and the limit holds`, async (t) => {
    const region = `skip-${newId()}`;
    const ids = await queueOf(engine.first, region, 12);
    const claimAt = (owner: string, limit: number, skip: readonly string[]) =>
      inRelaxedWriteTransaction(engine.first, (trx) => claimDueRecipients(trx, [region], iso(), lease(owner), limit, skip));
    // Three passed over: the statement's list is padded to four with the last one repeated.
    const skipped = ids.slice(0, 3);
    const first = (await claimAt('node-a', 4, skipped)).map((r) => r.id);
    t.equal(first.length, 4, 'the limit holds');
    t.notOk(first.some((id) => skipped.includes(id)), 'none of the three passed over');
    // Five passed over (padded to eight), two of them already held: the rest, never one of the five.
    const second = await claimAt('node-b', 50, [...skipped, first[0]!, first[1]!]);
    const rest = ids.filter((id) => !skipped.includes(id) && !first.includes(id));
    t.same(second.map((r) => r.id).sort(), rest.sort(), 'the five left, none passed over, none already held');
    // Past 1,024 the list is padded to a multiple of 1,024 (here 3,000 → 3,072), not to 4,096.
    t.same([1, 3, 4, 5, 1024, 1025, 3000].map(paddedLength), [1, 4, 4, 8, 1024, 2048, 3072]);
    const many = [...Array.from({ length: 2997 }, () => newId()), ...skipped];
    t.same(await claimAt('node-d', 50, many), [], 'a long list passed over: the three, and nothing else is free');
    const third = await claimAt('node-c', 50, []);
    t.same(third.map((r) => r.id).sort(), skipped.sort(), 'with nothing passed over, the three are claimed at last');
  });

  t.test(`${engine.name}: held, scheduled and future rows are never claimed`, async (t) => {
    const region = `held-${newId()}`;
    await queueOf(engine.first, region, 3, { state: 'held' });
    await queueOf(engine.first, region, 2, { state: 'scheduled' });
    await queueOf(engine.first, region, 2, { next_attempt_at: iso(Date.now() + 3600_000) });
    t.same(await claim(engine.first, region, 'node-a', 50), []);
  });

  t.test(`${engine.name}: a submission is recovered only after its process's lease lapsed, never by its own process`, async (t) => {
    const region = `recover-${newId()}`;
    const [id] = await queueOf(engine.first, region, 1);
    const t0 = Date.now();
    await claim(engine.first, region, 'node-a', 1, iso(t0), 1000);
    t.ok(await changeRecipient(engine.first, id!, ['queued'], { state: 'submitting', submitted_at: iso() }, iso(), 'node-a'));
    const lapsed = (db: Db, owner: string, at: number) => inRelaxedWriteTransaction(db, (trx) => claimLapsedSubmissions(trx, [region], iso(at), lease(owner, 60_000, at), 10));
    t.same(await lapsed(engine.second, 'node-b', t0 + 500), [], 'a live lease keeps it its own process\'s');
    t.same(await lapsed(engine.first, 'node-a', t0 + 5000), [], 'never the claimer\'s own submission');
    const [both1, both2] = await Promise.all([lapsed(engine.second, 'node-b', t0 + 5000), lapsed(engine.first, 'node-c', t0 + 5000)]);
    t.same([...both1!, ...both2!].map((r) => r.id), [id], 'after the lapse, exactly one recoverer takes it');
  });
}
