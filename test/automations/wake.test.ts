import { spawn } from 'node:child_process';
import t from 'tap';
import { PLATFORM_STREAM_WORK } from '../../core/automations/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { exitWithin, waitFor } from '../helpers/deadline.js';
import { svcBin } from '../helpers/faults-svc.js';
import { call } from '../helpers/http.js';
import { startTestRedis } from '../helpers/redis.js';

// An event accepted by the API process starts its run in the jobs process at once: the API
// publishes a wake-up after its commit, the jobs role's runner listens. The jobs child polls for
// due work only once a minute here, so a run reaching its first step within seconds was woken.
t.setTimeout(120_000);
const redis = await startTestRedis();
const app = await startTestAppliance({ redis, roles: ['api'] });
t.teardown(async () => { await app.stop(); await redis.stop(); });
const team = await app.newTeam('Woken flows');
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });
const db = app.appliance.services.database.db;

t.test('a run enrolled by the API starts in the jobs process well before its poll', async (t) => {
  t.equal((await api('POST', '/events', { name: 'woken.signup' })).status, 201);
  const automation = await api('POST', '/automations', {
    name: 'Woken', status: 'enabled',
    steps: [{ key: 'start', type: 'trigger', config: { event_name: 'woken.signup' } }, { key: 'pause', type: 'delay', config: { duration: '1 hour' } }],
    connections: [{ from: 'start', to: 'pause' }],
  });
  t.equal(automation.status, 201, JSON.stringify(automation.body));
  const contact = await api('POST', '/contacts', { email: 'woken@inbox-one.net' });
  const spawnedAt = new Date().toISOString();
  const jobs = spawn(svcBin, ['start', '--role', 'jobs'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_MAIL_HOSTNAME: 'mta.svc-test.net',
      SVC_DATA_DIR: app.config.data_dir, SVC_REDIS_URL: redis.url, SVC_LOG_LEVEL: 'error', SVC_SCANNER_CLAMD: '', SVC_WORK_POLL_MS: '60000',
    },
  });
  t.teardown(async () => {
    const exited = exitWithin('the jobs child to exit', jobs, 30_000);
    jobs.kill('SIGTERM');
    await exited;
  });
  // Up once its first pass worked the standing stream reader; from then on it waits a minute between polls.
  await waitFor('the jobs process to start working', async () => (await db.selectFrom('work_items').select('id')
    .where('kind', '=', PLATFORM_STREAM_WORK.kind).where('updated_at', '>=', spawnedAt).executeTakeFirst()) !== undefined, 60_000, 50);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const sentAt = Date.now();
  t.equal((await api('POST', '/events/send', { event: 'woken.signup', contact_id: contact.body.id })).status, 202);
  const waiting = await waitFor('the run to reach its delay step', async () => db.selectFrom('automation_run_steps')
    .select('created_at').where('step_key', '=', 'pause').where('status', '=', 'waiting').executeTakeFirst(), 15_000, 20);
  t.ok(Date.parse(waiting.created_at) - sentAt < 15_000, `first step ${Date.parse(waiting.created_at) - sentAt} ms after the 202`);
});
