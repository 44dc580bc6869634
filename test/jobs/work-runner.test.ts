import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { systemClock } from '../../core/clock.js';
import { durableWorker, type WorkHandler } from '../../core/work/index.js';
import { startWorkRunner } from '../../jobs/work-runner.js';
import { workRepo } from '../../storage/repos/index.js';
import { openDatabase } from '../../storage/sql/index.js';
import { waitFor } from '../helpers/deadline.js';

// The work runner wakes a parked item at its due time, not at its next poll: with a poll of a
// minute, an item parked for 400 ms runs its next step within seconds, and not before its time.
const dir = mkdtempSync(join(tmpdir(), 'svc-work-runner-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const parkMs = 400;
const pollMs = 60_000;

/** Two steps: the first parks the item for `parkMs` and notes when; the second notes when it ran. */
const parking: WorkHandler<Record<string, never>, number> = {
  kind: 'park',
  async step(item) {
    const at = Date.now();
    if (item.cursor === undefined) return { kind: 'continue', cursor: at, delayMs: parkMs };
    return { kind: 'done', cursor: at - item.cursor };
  },
};

t.test('a parked item runs at its due time, long before the next poll', async (t) => {
  const database = await openDatabase({ path: join(dir, 'work.sqlite'), synchronous: 'FULL' });
  t.teardown(() => database.close());
  const worker = durableWorker({
    db: database.db, clock: systemClock, logger: pino({ level: 'silent' }), handlers: [parking],
    leaseMs: 30_000, concurrency: 4, stepsPerTurn: 10,
  });
  const runner = startWorkRunner(worker, pollMs, pino({ level: 'silent' }));
  const item = await worker.enqueue('park', 'one', {});
  runner.wake();
  const done = await waitFor('the parked item to finish', async () => {
    const row = await workRepo(database.db).byId(item.id);
    return row?.state === 'done' ? row : undefined;
  }, 15_000).finally(() => runner.stop());
  const parkedFor = Number(done.cursor);
  t.ok(parkedFor >= parkMs, `not before its time (${parkedFor} ms after it parked)`);
  t.ok(parkedFor < pollMs / 4, `at its time, not at the next poll (${parkedFor} ms after it parked)`);
});
