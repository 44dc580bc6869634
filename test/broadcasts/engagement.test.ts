import t from 'tap';
import { startEngagementRig } from '../helpers/broadcast-engagement.js';
import { engagementScenario } from '../helpers/broadcast-engagement-scenario.js';

// A broadcast's engagement on SQLite: tracked links followed and the pixel fetched by a real HTTP
// client, a one-click unsubscribe and a complaint, then GET /broadcasts/{id}/clicked-links and
// every recipients type, raw and through the resend SDK (test/helpers/broadcast-engagement-scenario.ts).
const rig = await startEngagementRig();
t.teardown(() => rig.stop());
await engagementScenario(t, rig);
t.test('the appliance ran on SQLite', async (t) => { t.equal(rig.app.appliance.services.database.kind, 'sqlite'); });
