import t from 'tap';
import { bouncedCarriesType, clickedCarriesLink, deliveredStartsFlow, flowsOnEachOthersMailStop, mailEventExitEndsRun, membershipConditions, noTriggerNoEvent, startEmailFlowRig } from '../helpers/email-flows.js';

// Mail lifecycle events start flows (svc:email.*), mail from flows never loops, and conditions and
// show-when rules read topic and segment membership — on SQLite (email-events-postgres.test.ts:
// the same on PostgreSQL).
const rig = await startEmailFlowRig();
t.teardown(() => rig.stop());

t.test('the appliance runs on SQLite', async (t) => { t.equal(rig.app.appliance.services.database.kind, 'sqlite'); });

t.test('svc:email.delivered enrols the contact; its send carries the event; the flow\'s own mail does not re-enrol it', (t) => deliveredStartsFlow(t, rig));
t.test('two flows on svc:email.sent each enrol once on the other\'s mail, then stop', (t) => flowsOnEachOthersMailStop(t, rig));
t.test('svc:email.bounced carries the bounce type a condition reads', (t) => bouncedCarriesType(t, rig));
t.test('svc:email.clicked carries the link a condition reads', (t) => clickedCarriesLink(t, rig));
t.test('a team with no svc:email.* trigger writes no svc:email.* platform event', (t) => noTriggerNoEvent(t, rig));
t.test('an exit on svc:email.delivered, with no automation starting on it, ends the run', (t) => mailEventExitEndsRun(t, rig));
t.test('a condition and a flow template\'s show-when read topic and segment membership', (t) => membershipConditions(t, rig));
