import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { systemClock } from '../../core/clock.js';
import { durableWorker, type WorkHandler } from '../../core/work/index.js';
import { openDatabase } from '../../storage/sql/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { startWorkRunner } from '../../jobs/work-runner.js';

// A process working "count" items with the durable worker until killed:
//   node work-child.js <sqlite file> <lease ms> <ms each step waits>
// Each step writes one outbox row naming the item and its step number; the test kills this process
// with SIGKILL at random moments and counts the rows at the end: each number exactly once.
const [path, leaseMs, stepMs] = process.argv.slice(2);
const database = await openDatabase({ path: path!, synchronous: 'FULL' });
export const countHandler: WorkHandler<{ total: number }, number> = {
  kind: 'count',
  async step(item) {
    const n = item.cursor ?? 0;
    await sleep(Number(stepMs));
    const write = async (trx: typeof database.db) => eventsRepo(trx).insert({
      id: `${item.id}.${n}`, team_id: 'work-test', type: 'test.counted', created_at: new Date().toISOString(), data: JSON.stringify({ item: item.key, n }),
    });
    return n + 1 >= item.payload.total ? { kind: 'done', cursor: n + 1, write } : { kind: 'continue', cursor: n + 1, write };
  },
};
const worker = durableWorker({
  db: database.db, clock: systemClock, logger: pino({ level: 'silent' }), handlers: [countHandler],
  leaseMs: Number(leaseMs), concurrency: 4, stepsPerTurn: 25,
});
startWorkRunner(worker, 50, pino({ level: 'silent' }));
process.stdout.write('ready\n');
