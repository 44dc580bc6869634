import t from 'tap';
import { startEngagementRig } from '../helpers/broadcast-engagement.js';
import { engagementScenario } from '../helpers/broadcast-engagement-scenario.js';
import { createTestDatabase } from '../helpers/postgres.js';

// The same broadcast engagement as engagement.test.ts with SVC_DATABASE_URL naming a fresh
// PostgreSQL database: migration 029's tables, the per-link upserts and the lists' SQL there.
const pg = await createTestDatabase();
const rig = await startEngagementRig({ databaseUrl: pg.url });
t.teardown(async () => { await rig.stop(); await pg.drop(); });
await engagementScenario(t, rig);
t.test('the appliance ran on PostgreSQL', async (t) => { t.equal(rig.app.appliance.services.database.kind, 'postgres'); });
