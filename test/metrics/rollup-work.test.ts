import t from 'tap';
import { ROLLUP_WORK } from '../../core/metrics/index.js';
import { workRepo } from '../../storage/repos/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { fakeEmail, writeEmailEvent } from '../helpers/metrics-fixtures.js';

// The metrics rollup runs as the jobs role's durable work: one standing item, held under a lease
// by one jobs process, folding new outbox events without any query asking for them, and enqueued
// once however often the role starts.
const app = await startTestAppliance({ roles: ['api', 'jobs'], env: { SVC_METRICS_ROLLUP_INTERVAL_MS: '100', SVC_WORK_POLL_MS: '50' } });
t.teardown(() => app.stop());
const db = app.appliance.services.database.db;
const team = await app.newTeam('Rollup');

const rollupCursor = async () => Number((await db.selectFrom('outbox_cursors').select('seq').where('name', '=', 'metrics-rollup').executeTakeFirst())?.seq ?? 0);
const lastSeq = async () => Number((await db.selectFrom('events').select(({ fn }) => fn.max<number>('seq').as('seq')).executeTakeFirstOrThrow()).seq ?? 0);

t.test('new events are folded by the standing work item, unasked', async (t) => {
  const item = await workRepo(db).byKey(ROLLUP_WORK.kind, ROLLUP_WORK.key);
  t.ok(item, 'the jobs role enqueued the rollup item');
  for (let i = 0; i < 5; i += 1) await writeEmailEvent(db, team.teamId, 'email.delivered', fakeEmail(), new Date().toISOString());
  const seq = await lastSeq();
  await waitFor('the rollup to fold the new events', async () => (await rollupCursor()) >= seq);
  const minutes = await db.selectFrom('metrics_minutes').selectAll().where('team_id', '=', team.teamId).execute();
  t.ok(minutes.length > 0, 'the minute rollup holds the team\'s events');
  const after = await workRepo(db).byKey(ROLLUP_WORK.kind, ROLLUP_WORK.key);
  t.ok(after!.steps > 0, `the item committed steps (${after!.steps})`);
});

t.test('enqueueing the standing item again keeps the one there', async (t) => {
  const before = await workRepo(db).byKey(ROLLUP_WORK.kind, ROLLUP_WORK.key);
  const again = await app.appliance.services.work.enqueue(ROLLUP_WORK.kind, ROLLUP_WORK.key, {});
  t.equal(again.id, before!.id);
  const count = await db.selectFrom('work_items').select(({ fn }) => fn.countAll<number>().as('n')).where('kind', '=', ROLLUP_WORK.kind).executeTakeFirstOrThrow();
  t.equal(Number(count.n), 1);
});
