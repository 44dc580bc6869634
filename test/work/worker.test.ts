import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t, { type Test } from 'tap';
import { durableWorker, type WorkHandler } from '../../core/work/index.js';
import { openDatabase, walSyncOf, type Database, type Db } from '../../storage/sql/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { workRepo } from '../../storage/repos/index.js';
import { testClock } from '../helpers/test-clock.js';
import { eventWithin, exitWithin, waitFor } from '../helpers/deadline.js';
import { openPgFixture } from '../helpers/pg-rows.js';

// The durable worker: steps commit with their cursor, a parked item wakes at its time, a lost lease
// cannot commit, a cancel stops the owner, and kill -9 at random moments neither skips nor repeats
// a step (counted in the database the steps write to) — on SQLite and on PostgreSQL.
const dir = mkdtempSync(join(tmpdir(), 'svc-work-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const silent = pino({ level: 'silent' });

/**
 * Counts to payload.total, one outbox row per step; `gate` can hold a step (to race another owner).
 * With `distinctRows`, a step committed twice writes two rows instead of failing on the second.
 */
function counter(gate?: { held: Promise<void> }, distinctRows = false): WorkHandler<{ total: number; wait?: number }, number> {
  return {
    kind: 'count',
    async step(item) {
      const n = item.cursor ?? 0;
      if (gate) await gate.held;
      const write = async (trx: Db) => eventsRepo(trx).insert({
        id: distinctRows ? `${item.id}.${n}.${Math.random()}` : `${item.id}.${n}`, team_id: 'work-test', type: 'test.counted', created_at: new Date().toISOString(), data: JSON.stringify({ item: item.key, n }),
      });
      if (item.payload.wait !== undefined && n === 1) return { kind: 'continue', cursor: n + 1, write, delayMs: item.payload.wait };
      return n + 1 >= item.payload.total ? { kind: 'done', cursor: n + 1, write } : { kind: 'continue', cursor: n + 1, write };
    },
  };
}

async function counted(db: Db, key: string): Promise<number[]> {
  const rows = await db.selectFrom('events').select('data').where('type', '=', 'test.counted').execute();
  return rows.map((r) => JSON.parse(r.data) as { item: string; n: number }).filter((d) => d.item === key).map((d) => d.n).sort((a, b) => a - b);
}

const range = (n: number) => [...Array(n).keys()];

async function suite(t: Test, name: string, open: () => Promise<Database>) {
  const database = await open();
  const db = database.db;
  t.teardown(() => database.close());
  const clock = testClock();
  const worker = (handler = counter(), leaseMs = 30_000) => durableWorker({ db, clock, logger: silent, handlers: [handler], leaseMs, concurrency: 4, stepsPerTurn: 10 });

  t.test(`${name}: steps commit with their cursor; enqueueing a key twice is one item`, async (t) => {
    const w = worker();
    const first = await w.enqueue('count', 'a', { total: 25 });
    const again = await w.enqueue('count', 'a', { total: 99 });
    t.equal(again.id, first.id);
    t.equal(await w.runDue(), 10, 'one turn of ten steps, then the item yields');
    t.match(await workRepo(db).byId(first.id), { state: 'queued', cursor: '10', steps: 10, lease_owner: null });
    while ((await w.runDue()) > 0);
    t.match(await workRepo(db).byId(first.id), { state: 'done', cursor: '25', steps: 25 });
    t.same(await counted(db, 'a'), range(25));
  });

  t.test(`${name}: a parked item wakes at its due time`, async (t) => {
    const w = worker();
    const item = await w.enqueue('count', 'parked', { total: 4, wait: 60_000 });
    t.equal(await w.msUntilDue(), 0, 'a new item is due at once');
    t.equal(await w.runDue(), 2, 'two steps, the second parks it');
    t.equal(await w.runDue(), 0, 'nothing due yet');
    t.equal(await w.msUntilDue(), 60_000, 'the runner is told when it falls due');
    clock.advance(60_001);
    t.equal(await w.msUntilDue(), -1);
    t.equal(await w.runDue(), 2);
    t.match(await workRepo(db).byId(item.id), { state: 'done' });
    t.equal(await w.msUntilDue(), undefined, 'nothing waits');
    t.same(await counted(db, 'parked'), range(4));
  });

  t.test(`${name}: a step whose lease was lost cannot commit`, async (t) => {
    let open!: () => void;
    const gate = { held: new Promise<void>((r) => { open = r; }) };
    const slow = worker(counter(gate), 1_000);
    const item = await slow.enqueue('count', 'raced', { total: 3 });
    const slowTurn = slow.runDue();
    await waitFor('the first owner to claim', async () => (await workRepo(db).byId(item.id))?.state === 'running');
    t.equal(await slow.msUntilDue(), undefined, 'an item under a live lease is not waiting');
    clock.advance(1_001);
    t.ok((await slow.msUntilDue())! < 0, 'once its lease lapsed, it is due');
    const fast = worker();
    open();
    await Promise.all([slowTurn, (async () => { while ((await fast.runDue()) > 0); })()]);
    while ((await slow.runDue()) + (await fast.runDue()) > 0);
    t.same(await counted(db, 'raced'), range(3), 'every step once, whoever held the lease');
    t.match(await workRepo(db).byId(item.id), { state: 'done' });
  });

  t.test(`${name}: a worker's second claim of a lapsed item fences its own first turn`, async (t) => {
    // The jobs role keeps two claims of one worker in flight: the owner is the claim's, not the process's.
    let open!: () => void;
    const gate = { held: new Promise<void>((r) => { open = r; }) };
    const w = worker(counter(gate, true), 1_000);
    const item = await w.enqueue('count', 'self-raced', { total: 3 });
    const staleTurn = w.runDue();
    await waitFor('the first claim', async () => (await workRepo(db).byId(item.id))?.state === 'running');
    const firstLease = (await workRepo(db).byId(item.id))!.lease_until;
    clock.advance(1_001);
    const secondTurn = w.runDue();
    await waitFor('the second claim', async () => (await workRepo(db).byId(item.id))?.lease_until !== firstLease);
    open();
    t.equal(await staleTurn, 0, 'the first turn committed nothing');
    await secondTurn;
    while ((await w.runDue()) > 0);
    t.same(await counted(db, 'self-raced'), range(3), 'every step once');
  });

  t.test(`${name}: steps committing together: one whose lease was lost is refused, the others commit`, async (t) => {
    let open!: () => void;
    const gate = { held: new Promise<void>((r) => { open = r; }) };
    const w = worker(counter(gate));
    const kept = await w.enqueue('count', 'batch-kept', { total: 1 });
    const lost = await w.enqueue('count', 'batch-lost', { total: 1 });
    const turn = w.runDue();
    await waitFor('both claimed', async () => (await workRepo(db).byId(kept.id))?.state === 'running' && (await workRepo(db).byId(lost.id))?.state === 'running');
    t.equal(await w.cancel(lost.id), true, 'one item is canceled while both steps run');
    open();
    t.equal(await turn, 1, 'one step committed');
    t.same(await counted(db, 'batch-kept'), [0], "the other item's step committed");
    t.same(await counted(db, 'batch-lost'), [], "the canceled item's step did not");
    t.match(await workRepo(db).byId(kept.id), { state: 'done', steps: 1 });
    t.match(await workRepo(db).byId(lost.id), { state: 'canceled', steps: 0 });
  });

  t.test(`${name}: a cancel stops the owner at its next step`, async (t) => {
    const w = worker();
    const item = await w.enqueue('count', 'canceled', { total: 50 });
    await w.runDue();
    t.equal(await w.cancel(item.id), true);
    t.equal(await w.runDue(), 0);
    t.match(await workRepo(db).byId(item.id), { state: 'canceled' });
    t.same(await counted(db, 'canceled'), range(10));
  });

  t.test(`${name}: a step that throws is released and tried again later`, async (t) => {
    let fail = true;
    const flaky: WorkHandler<{ total: number }, number> = {
      kind: 'count',
      async step(item) {
        if (fail) throw new Error('resource busy');
        return counter().step(item);
      },
    };
    const w = worker(flaky);
    const item = await w.enqueue('count', 'flaky', { total: 2 });
    t.equal(await w.runDue(), 0);
    t.match(await workRepo(db).byId(item.id), { state: 'queued', error: 'resource busy', lease_owner: null });
    fail = false;
    t.equal(await w.runDue(), 0, 'not before its retry time');
    clock.advance(5_001);
    t.equal(await w.runDue(), 2);
    t.same(await counted(db, 'flaky'), range(2));
  });
}

t.test('SQLite', (t) => suite(t, 'sqlite', () => openDatabase({ path: join(dir, 'work.sqlite'), synchronous: 'FULL' })));

t.test('SQLite: a relaxed step commits without its own fsync; the last, durable one has one', async (t) => {
  const database = await openDatabase({ path: join(dir, 'relaxed.sqlite'), synchronous: 'FULL' });
  t.teardown(() => database.close());
  const walSync = walSyncOf(database.db)!;
  const original = walSync.sync.bind(walSync);
  let syncs = 0;
  walSync.sync = async () => { syncs++; await original(); };
  const relaxedCounter: WorkHandler<{ total: number }, number> = {
    kind: 'count',
    async step(item) {
      const n = item.cursor ?? 0;
      const write = async (trx: Db) => eventsRepo(trx).insert({
        id: `${item.id}.${n}`, team_id: 'work-test', type: 'test.counted', created_at: new Date().toISOString(), data: JSON.stringify({ item: item.key, n }),
      });
      return n + 1 >= item.payload.total ? { kind: 'done', cursor: n + 1, write } : { kind: 'continue', cursor: n + 1, write, relaxed: true };
    },
  };
  const w = durableWorker({ db: database.db, clock: testClock(), logger: silent, handlers: [relaxedCounter], leaseMs: 30_000, concurrency: 1, stepsPerTurn: 10 });
  await w.enqueue('count', 'relaxed', { total: 6 });
  syncs = 0;
  t.equal(await w.runDue(), 6);
  t.same(await counted(database.db, 'relaxed'), range(6), 'every step committed once');
  t.equal(syncs, 1, 'five relaxed steps and one durable: one fsync of the WAL');
});

t.test('PostgreSQL', async (t) => {
  const fixture = await openPgFixture();
  t.teardown(() => fixture.close());
  await suite(t, 'postgres', async () => fixture.database);
  t.test('two pools claiming at once never share an item', async (t) => {
    const other = await fixture.other();
    const clock = testClock();
    const make = (db: Db) => durableWorker({ db, clock, logger: silent, handlers: [counter()], leaseMs: 30_000, concurrency: 8, stepsPerTurn: 1 });
    const [a, b] = [make(fixture.database.db), make(other.db)];
    for (const i of range(20)) await a.enqueue('count', `pool-${i}`, { total: 5 });
    const drain = async (w: typeof a) => { while ((await w.runDue()) > 0); };
    await Promise.all([drain(a), drain(b)]);
    for (const i of range(20)) t.same(await counted(fixture.database.db, `pool-${i}`), range(5), `pool-${i} counted once each`);
  });
});

t.test('kill -9 mid-run, five times: every step exactly once', async (t) => {
  const path = join(dir, 'crash.sqlite');
  const database = await openDatabase({ path, synchronous: 'FULL' });
  t.teardown(() => database.close());
  const items = range(6).map((i) => `crash-${i}`);
  const perItem = 400;
  const total = items.length * perItem;
  const seeder = durableWorker({ db: database.db, clock: { now: () => new Date() }, logger: silent, handlers: [counter()], leaseMs: 400, concurrency: 1, stepsPerTurn: 1 });
  for (const key of items) await seeder.enqueue('count', key, { total: perItem });
  const child = join(import.meta.dirname, '../helpers/work-child.js');
  const committed = async () => Number((await database.db.selectFrom('work_items').select(({ fn }) => fn.sum<number>('steps').as('steps')).executeTakeFirstOrThrow()).steps);
  const start = async (): Promise<ChildProcess> => {
    const proc = spawn(process.execPath, [child, path, '400', '3'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = await eventWithin<[Buffer]>('the worker child to start', proc.stdout!, 'data');
    t.match(String(line), /ready/);
    return proc;
  };
  // Each kill falls at a set share of the work, whatever the machine's speed: mid-run every time.
  for (let kill = 1; kill <= 5; kill += 1) {
    const proc = await start();
    const target = Math.floor((total * kill) / 7);
    await waitFor(`the workers to commit ${target} steps`, async () => (await committed()) >= target, 60_000, 5);
    const exited = exitWithin('the killed worker child to exit', proc);
    proc.kill('SIGKILL');
    await exited;
  }
  const done = await committed();
  t.ok(done < total, `work remained after the fifth kill (${done} of ${total} steps)`);
  const last = await start();
  t.teardown(() => { last.kill('SIGKILL'); });
  await waitFor('every item done after the kills', async () => {
    const rows = await database.db.selectFrom('work_items').select('state').where('kind', '=', 'count').execute();
    return rows.length === items.length && rows.every((r) => r.state === 'done');
  }, 60_000);
  for (const key of items) t.same(await counted(database.db, key), range(perItem), `${key}: each of ${perItem} steps exactly once`);
});
