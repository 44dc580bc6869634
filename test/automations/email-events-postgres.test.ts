import t from 'tap';
import { createTestDatabase } from '../helpers/postgres.js';
import { deliveredStartsFlow, flowsOnEachOthersMailStop, mailEventExitEndsRun, membershipConditions, startEmailFlowRig } from '../helpers/email-flows.js';

// email-events.test.ts with SVC_DATABASE_URL naming a fresh PostgreSQL database.
const pg = await createTestDatabase();
const rig = await startEmailFlowRig(pg.url);
t.teardown(async () => { await rig.stop(); await pg.drop(); });

t.test('on PostgreSQL', async (t) => {
  t.equal(rig.app.appliance.services.database.kind, 'postgres');
  await t.test('svc:email.delivered starts a flow; no re-enrolment on its own mail', (t) => deliveredStartsFlow(t, rig));
  await t.test('flows on each other\'s mail stop', (t) => flowsOnEachOthersMailStop(t, rig));
  await t.test('conditions and show-when on membership', (t) => membershipConditions(t, rig));
  await t.test('an exit on a mail event ends the run', (t) => mailEventExitEndsRun(t, rig));
});
