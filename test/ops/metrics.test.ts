import { readFileSync } from 'node:fs';
import t from 'tap';
import { roleLabel } from '../../bin/ops-metrics.js';
import { roles } from '../../bin/role-names.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call, lastEventOf } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { scrapeSocket, scrapeUrl, samples, typeOf, valueOf } from '../helpers/scrape.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

// The operator's GET /metrics: on the admin socket and on the opt-in TCP port, parsed after real
// deliveries to the fake MX and a real webhook attempt; every series carries the process's role,
// the destination-domain label is bounded, and a process without the api role (another role under
// systemd) is part of the same scrape.
t.setTimeout(120_000);
const dns = await mailZone(['inbox-one.net', 'inbox-two.net']);
const mx = await startFakeMx({ dns: dns.address });
const receiver = await startWebhookReceiver();
const metricsPort = await freePort();
const clock = testClock();
const app = await startTestAppliance({
  clock, roles: ['api', 'outbound'],
  env: {
    SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_REPLY_TIMEOUT_S: '3',
    SVC_OPS_METRICS_PORT: String(metricsPort), SVC_OPS_METRICS_DOMAIN_LABELS: '1', SVC_WEBHOOKS_ALLOW_PRIVATE: 'true',
  },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); await receiver.stop(); });
const team = await app.newTeam('Metrics');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
const role = 'api+outbound';
const scrape = async () => {
  const got = await scrapeSocket(app.adminSocket);
  if (got.status !== 200) throw new Error(`GET /metrics answered ${got.status}: ${got.text}`);
  return got.text;
};
const send = async (body: Record<string, unknown>) => {
  const r = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: { from: 'hello@sender.net', subject: 'Hi', text: 'Hi', ...body } });
  if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
  return r.body.id as string;
};
const lastEvent = (id: string) => lastEventOf(app.baseUrl, team.token, id);

t.test('the admin socket serves the exposition with every metric named, each series with its role', async (t) => {
  const got = await scrapeSocket(app.adminSocket);
  t.equal(got.status, 200);
  t.match(got.contentType, /^text\/plain; version=0\.0\.4/);
  const types = {
    svc_deliveries_total: 'counter', svc_delivery_attempt_duration_seconds: 'histogram', svc_delivery_latency_seconds: 'histogram',
    svc_queue_recipients: 'gauge', svc_webhook_messages: 'gauge', svc_webhook_attempts_total: 'counter', svc_webhook_attempt_duration_seconds: 'histogram',
    svc_inbound_sessions: 'gauge', svc_inbound_inflight_bytes: 'gauge', svc_scan_verdicts_total: 'counter', svc_scan_duration_seconds: 'histogram',
    svc_sqlite_file_bytes: 'gauge', svc_outbound_inflight: 'gauge', nodejs_eventloop_lag_seconds: 'gauge', svc_metrics_peer_processes: 'gauge',
  };
  for (const [name, type] of Object.entries(types)) t.equal(typeOf(got.text, name), type, `${name} is a ${type}`);
  t.ok(valueOf(got.text, 'svc_sqlite_file_bytes', { role, file: 'database' })! > 0, 'the database file has a size');
  t.type(valueOf(got.text, 'svc_sqlite_file_bytes', { role, file: 'wal' }), 'number');
  t.type(valueOf(got.text, 'nodejs_eventloop_lag_seconds', { role }), 'number', 'event-loop lag of this process');
  t.equal(valueOf(got.text, 'svc_outbound_inflight', { role, region: 'us-east-1' }), 0);
  const unlabelled = got.text.split('\n').filter((l) => l && !l.startsWith('#') && !l.includes(`role="${role}"`));
  t.same(unlabelled, [], 'every sample carries the role');
});

t.test('a delivery to the fake MX moves the delivery counters and histograms', async (t) => {
  const before = await scrape();
  const delivered = () => valueOf(before, 'svc_deliveries_total', { outcome: 'delivered', domain: 'inbox-one.net' }) ?? 0;
  t.equal(delivered(), 0);
  const id = await send({ to: 'ann@inbox-one.net' });
  await waitFor('the email to be delivered', async () => (await lastEvent(id)) === 'delivered');
  const after = await scrape();
  t.equal(valueOf(after, 'svc_deliveries_total', { role, outcome: 'delivered', domain: 'inbox-one.net' }), 1);
  t.equal(valueOf(after, 'svc_delivery_attempt_duration_seconds_count', { role, outcome: 'delivered' }), 1);
  t.equal(valueOf(after, 'svc_delivery_latency_seconds_count', { role, outcome: 'delivered' }), 1);
  t.ok(valueOf(after, 'svc_delivery_attempt_duration_seconds_sum', { outcome: 'delivered' })! > 0);

  mx.script.set('later@inbox-two.net', { kind: 'rcpt', reply: '451 4.7.1 Greylisted, try again later' });
  await send({ to: 'later@inbox-two.net' });
  await waitFor('the deferral to be counted', async () => valueOf(await scrape(), 'svc_deliveries_total', { outcome: 'deferred' }) === 1);
  const third = await scrape();
  t.equal(valueOf(third, 'svc_deliveries_total', { outcome: 'deferred', domain: 'other' }), 1, 'past the one labelled domain, "other"');
  t.equal(samples(third, 'svc_deliveries_total').filter((s) => s.labels.domain === 'inbox-two.net').length, 0);
  await waitFor('the recipient to be queued for its retry', async () => valueOf(await scrape(), 'svc_queue_recipients', { region: 'us-east-1', state: 'deferred' }) === 1);
});

t.test('queue depth by region and state, read from the database at scrape time', async (t) => {
  const at = new Date(clock.now().getTime() + 3_600_000).toISOString();
  await send({ to: ['s1@inbox-one.net', 's2@inbox-one.net'], scheduled_at: at });
  const text = await scrape();
  t.equal(valueOf(text, 'svc_queue_recipients', { role, region: 'us-east-1', state: 'scheduled' }), 2);
});

t.test('a failed webhook attempt counts, and the message waiting for its retry is backlog', async (t) => {
  receiver.setFallback('/down', { status: 503 });
  const hook = await call(app.baseUrl, 'POST', '/webhooks', { token: team.token, body: { endpoint: `${receiver.url}/down`, events: ['email.sent'] } });
  t.equal(hook.status, 201);
  const id = await send({ to: 'wh@inbox-one.net' });
  await waitFor('the email to be delivered', async () => (await lastEvent(id)) === 'delivered');
  await app.appliance.services.webhookDispatcher.runDue();
  t.equal(receiver.at('/down').length, 1, 'one attempt, answered 503');
  const text = await scrape();
  t.equal(valueOf(text, 'svc_webhook_attempts_total', { role, outcome: 'retry' }), 1);
  t.equal(valueOf(text, 'svc_webhook_attempt_duration_seconds_count', { role }), 1);
  t.equal(valueOf(text, 'svc_webhook_messages', { role, status: 'pending', due: 'no' }), 1, 'waiting for its retry');
});

t.test('the opt-in TCP port serves the same exposition and nothing else; the public API does not', async (t) => {
  const got = await scrapeUrl(`http://127.0.0.1:${metricsPort}/metrics`);
  t.equal(got.status, 200);
  t.equal(valueOf(got.text, 'svc_deliveries_total', { role, outcome: 'delivered', domain: 'inbox-one.net' }), 2, 'the two deliveries so far');
  const other = await fetch(`http://127.0.0.1:${metricsPort}/emails`, { signal: AbortSignal.timeout(30_000) });
  t.equal(other.status, 404);
  t.match(await other.json(), { statusCode: 404, name: 'not_found' });
  const publicApi = await call(app.baseUrl, 'GET', '/metrics');
  t.equal(publicApi.status, 404, 'never on the HTTP API');
});

t.test('a process without the api role shares its figures into the same scrape', async (t) => {
  const other = await startTestAppliance({ roles: ['inbound'], redis: app.redis, env: { SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: '0' } });
  let stopped = false;
  t.teardown(async () => { if (!stopped) await other.stop(); });
  const shared = await waitFor('the inbound process\'s figures', async () => {
    const text = await scrape();
    return valueOf(text, 'svc_inbound_sessions', { role: 'inbound' }) !== undefined ? text : undefined;
  });
  t.equal(valueOf(shared, 'svc_metrics_peer_processes', { role }), 1);
  t.type(valueOf(shared, 'nodejs_eventloop_lag_seconds', { role: 'inbound' }), 'number', 'its own event-loop lag');
  t.equal(valueOf(shared, 'svc_deliveries_total', { role, outcome: 'delivered', domain: 'inbox-one.net' }), 2, 'this process\'s figures unchanged');
  t.equal(valueOf(shared, 'svc_queue_recipients', { role: 'inbound', state: 'scheduled' }), undefined, 'database gauges come from the serving process only');
  await other.stop();
  stopped = true;
  const after = await scrape();
  t.equal(valueOf(after, 'svc_inbound_sessions', { role: 'inbound' }), undefined, 'a stopped process drops out');
  t.equal(valueOf(after, 'svc_metrics_peer_processes', { role }), 0);
});

t.test('the dashboard in docs/ only asks for metrics the scrape has', async (t) => {
  const dashboard = JSON.parse(readFileSync(new URL('../../../docs/grafana-svc.json', import.meta.url), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
  const text = await scrape();
  const exprs = dashboard.panels.flatMap((p) => p.targets.map((target) => target.expr));
  t.ok(exprs.length >= 15, 'a panel for each figure');
  const names = new Set(exprs.flatMap((e) => e.match(/\b(?:svc|nodejs)_[a-z0-9_]+/g) ?? []));
  for (const name of names) {
    const base = name.replace(/_(bucket|count|sum)$/, '');
    t.ok(typeOf(text, base), `${name} is exposed`);
  }
});

t.test('the role label names the process: all, a set of roles, an outbound process\'s regions', async (t) => {
  t.equal(roleLabel(roles, roles, []), 'all');
  t.equal(roleLabel(['jobs', 'api'], roles, []), 'api+jobs');
  t.equal(roleLabel(['outbound'], roles, ['us-east-1']), 'outbound@us-east-1');
  t.equal(roleLabel(['outbound'], roles, ['eu-west-1', 'ap-northeast-1']), 'outbound@ap-northeast-1,eu-west-1', 'two outbound processes never share a label');
  t.equal(roleLabel(roles, roles, ['us-east-1']), 'api+inbound+jobs+outbound@us-east-1');
});
