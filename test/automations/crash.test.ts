import { spawn, type ChildProcess } from 'node:child_process';
import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { publishedTemplate } from '../helpers/templates.js';
import { exitWithin, waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { svcBin } from '../helpers/faults-svc.js';
import { call } from '../helpers/http.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { startTestRedis } from '../helpers/redis.js';
import { verifyDomainThroughApi } from '../helpers/sending.js';

// kill -9 while runs are mid-graph: the runs are worked by a real `bin/svc start --role jobs`
// child on the same data folder, killed with SIGKILL at moments spread over the work and started
// again each time. In the end every run completes and each send_email step made exactly one
// email, delivered by the appliance's own outbound role (never killed here) to a fake MX on
// loopback, where it is counted: each step's email taken exactly once, by its own recipient.
// Four cold starts of a jobs process, and delivery besides, on a shared two-core machine.
t.setTimeout(300_000);
const redis = await startTestRedis();
const dns = await mailZone(['inbox-one.net']);
const mx = await startFakeMx({ keepRaw: false });
const app = await startTestAppliance({
  redis, roles: ['api', 'outbound'],
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_POLL_S: '1', SVC_WEBHOOKS_ALLOW_PRIVATE: 'true' },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); await redis.stop(); });
const team = await app.newTeam('Crash flows');
await verifyDomainThroughApi(app.baseUrl, team.token, dns, 'flows-sender.net');
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });
// An endpoint for the run events, so that they are written (only subscribed ones are) and counted below.
const receiver = await startWebhookReceiver();
t.teardown(() => receiver.stop());
const db = app.appliance.services.database.db;
const RUNS = 20;
const TEMPLATE = await publishedTemplate(app.baseUrl, team.token, {});

function spawnJobs(): ChildProcess {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_MAIL_HOSTNAME: 'mta.svc-test.net',
    SVC_DATA_DIR: app.config.data_dir, SVC_REDIS_URL: redis.url, SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0',
    SVC_WORK_POLL_MS: '50', SVC_WORK_LEASE_MS: '2000', SVC_LOG_LEVEL: 'error', SVC_WEBHOOKS_ALLOW_PRIVATE: 'true',
    // Two runs a claim (two claims in flight, their steps sharing transactions): small enough that
    // the sends advance a few at a time, so each kill lands mid-graph rather than after the lot.
    SVC_WORK_CONCURRENCY: '2',
  };
  return spawn(svcBin, ['start', '--role', 'jobs'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

const mailStep = (key: string) => ({ key, type: 'send_email', config: { template: { id: TEMPLATE }, from: 'Flows <f@flows-sender.net>', subject: key } });
const sentSteps = async () => Number((await db.selectFrom('automation_run_steps').select((eb) => eb.fn.countAll().as('n'))
  .where('type', '=', 'send_email').where('status', '=', 'completed').executeTakeFirstOrThrow()).n);

t.test('kill -9 mid-graph, three times: every run completes, every send taken exactly once at the MX', async (t) => {
  t.equal((await api('POST', '/webhooks', { endpoint: `${receiver.url}/runs`, events: ['automation.run.started', 'automation.run.completed'] })).status, 201);
  await api('POST', '/events', { name: 'crash.flow' });
  const automation = await api('POST', '/automations', {
    name: 'Two mails', status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'crash.flow' } },
      mailStep('first'),
      { key: 'pause', type: 'delay', config: { duration: '2 seconds' } },
      mailStep('second'),
    ],
    connections: [{ from: 'start', to: 'first' }, { from: 'first', to: 'pause' }, { from: 'pause', to: 'second' }],
  });
  t.equal(automation.status, 201, JSON.stringify(automation.body));
  for (let i = 0; i < RUNS; i++) {
    const contact = await api('POST', '/contacts', { email: `r${i}@inbox-one.net` });
    t.equal((await api('POST', '/events/send', { event: 'crash.flow', contact_id: contact.body.id })).status, 202);
  }
  for (let kill = 1; kill <= 3; kill++) {
    const child = spawnJobs();
    try {
      // Each kill falls at a set share of the 2 × RUNS sends: mid-graph every time.
      const target = Math.floor((2 * RUNS * kill) / 5);
      await waitFor(`${target} sends before kill ${kill}`, async () => (await sentSteps()) >= target, 60_000, 10);
    } finally {
      // Killed on a failed wait too: a child left running would outlive the suite.
      // The exit's deadline starts at the kill (exitWithin sees an exit that came before it).
      child.kill('SIGKILL');
      await exitWithin('the killed jobs child to exit', child);
    }
  }
  t.ok(await sentSteps() < 2 * RUNS, 'sends remained after the third kill');
  const last = spawnJobs();
  t.teardown(() => { last.kill('SIGKILL'); });
  await waitFor('every run completed', async () => {
    const open = await db.selectFrom('automation_runs').select('id').where('status', '!=', 'completed').execute();
    return open.length === 0;
  }, 120_000, 100);
  const steps = await db.selectFrom('automation_run_steps').selectAll().where('type', '=', 'send_email').execute();
  t.equal(steps.length, 2 * RUNS, 'one record per run and send step');
  const emailIds = steps.map((s) => JSON.parse(s.output!).email_id as string);
  t.equal(new Set(emailIds).size, 2 * RUNS, 'each step names its own email');
  const emails = await db.selectFrom('emails').select(['id', 'recipients_text', 'subject']).where('team_id', '=', team.teamId).execute();
  t.equal(emails.length, 2 * RUNS, 'exactly one email per run and step');
  t.same(new Set(emails.map((e) => e.id)), new Set(emailIds));
  const perRecipient = new Map<string, string[]>();
  for (const e of emails) perRecipient.set(e.recipients_text, [...(perRecipient.get(e.recipients_text) ?? []), e.subject].sort());
  t.equal(perRecipient.size, RUNS);
  t.ok([...perRecipient.values()].every((subjects) => subjects.join() === 'first,second'), 'each contact got first and second once');

  // The far end: every step's email taken by the MX exactly once, by its own recipient only.
  await waitFor('every email delivered', async () => {
    const pending = await db.selectFrom('email_recipients').select('state').where('state', '!=', 'delivered').execute();
    return pending.length === 0 && mx.received.length >= 2 * RUNS;
  }, 60_000, 100);
  const messageIds = await db.selectFrom('emails').select(['id', 'message_id', 'recipients_text']).where('team_id', '=', team.teamId).execute();
  const taken = mx.accepted();
  t.equal(mx.received.length, 2 * RUNS, 'the MX took one message per run and send step, none more');
  t.ok(messageIds.every((e) => taken.get(e.message_id) === 1), 'each step\'s email taken exactly once at the MX');
  t.ok(mx.received.every((m) => messageIds.find((e) => e.message_id === m.messageId)?.recipients_text === m.rcptTo), 'each by its own recipient');
  const perRcpt = new Map<string, number>();
  for (const m of mx.received) perRcpt.set(m.rcptTo, (perRcpt.get(m.rcptTo) ?? 0) + 1);
  t.equal(perRcpt.size, RUNS, 'every run\'s contact reached');
  t.ok([...perRcpt.values()].every((n) => n === 2), 'two messages per contact at the MX: first and second once each');
  const hooks = await db.selectFrom('events').select('type').where('team_id', '=', team.teamId).where('type', 'in', ['automation.run.started', 'automation.run.completed']).execute();
  t.equal(hooks.filter((h) => h.type === 'automation.run.started').length, RUNS, 'started once per run');
  t.equal(hooks.filter((h) => h.type === 'automation.run.completed').length, RUNS, 'completed once per run');
  // Webhooks are at least once: a kill between a send and its record may repeat one; none is missing.
  const seen = () => new Set(receiver.at('/runs').map((r) => { const body = JSON.parse(r.body); return `${body.type}:${body.data.id}`; }));
  await waitFor('every run\'s two events at the endpoint', async () => seen().size >= 2 * RUNS, 60_000, 100);
  t.equal(seen().size, 2 * RUNS, 'every run\'s started and completed events reached the endpoint');
});
