import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { withDeadline } from '../helpers/deadline.js';
import { call } from '../helpers/http.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { testClock } from '../helpers/test-clock.js';
import { verifies, verifyDelivery } from '../helpers/webhook-verify.js';
import { emitEvent, type EventType } from '../../core/outbox/index.js';
import { retryDelaysMs } from '../../core/webhooks/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { webhooksRepo } from '../../storage/repos/index.js';
import { fanOut } from '../../core/webhooks/fan-out.js';

const receiver = await startWebhookReceiver();
t.teardown(() => receiver.stop());
const clock = testClock();
const app = await startTestAppliance({
  clock,
  env: { SVC_WEBHOOKS_ALLOW_PRIVATE: 'true', SVC_WEBHOOKS_TIMEOUT_MS: '1500', SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' },
});
t.teardown(() => app.stop());
const base = app.baseUrl;
const dispatcher = app.appliance.services.webhookDispatcher;
const events = eventsRepo(app.appliance.services.database.db);

const emailData = (id: string) => ({ email_id: id, from: 'a@sender.test', to: ['b@rcpt.test'], subject: 'Hi', message_id: `<${id}@svc>`, created_at: '2026-01-01T00:00:00.000Z', tags: { plan: 'pro' } });
const emit = (teamId: string, type: EventType, data: Record<string, unknown>) => emitEvent(events, teamId, type, data, clock.now());

async function endpoint(token: string, path: string, types: string[]) {
  const r = await call(base, 'POST', '/webhooks', { token, body: { endpoint: receiver.url + path, events: types } });
  if (r.status !== 201) throw new Error(`create failed: ${JSON.stringify(r.body)}`);
  return r.body as { id: string; signing_secret: string };
}

t.test('each subscribed event reaches the endpoint once, signed under wh-, webhook- and svix- headers, with the spec envelope', async (t) => {
  const team = await app.newTeam('Deliver');
  const other = await app.newTeam('Other');
  await emit(team.teamId, 'email.sent', emailData('before-endpoint'));
  const hook = await endpoint(team.token, '/deliver', ['email.sent', 'email.delivered', 'suppression.added']);
  const sentId = await emit(team.teamId, 'email.sent', emailData('e1'));
  await emit(team.teamId, 'email.opened', emailData('not-subscribed'));
  await emit(other.teamId, 'email.sent', emailData('other-team'));
  await call(base, 'POST', '/suppressions', { token: team.token, body: { email: 'gone@rcpt.test' } });

  const summary = await dispatcher.runDue();
  t.equal(summary.attempted, 2);
  const got = receiver.at('/deliver');
  t.equal(got.length, 2, 'only subscribed events of this team, written after the endpoint existed');
  const [sent, suppressed] = got;
  t.equal(sent!.method, 'POST');
  t.equal(sent!.headers['user-agent'], 'Svc-Webhooks/1.0');
  t.equal(sent!.headers['content-type'], 'application/json');
  t.match(sent!.headers['wh-id'], /^[0-9a-f-]{36}$/);
  t.match(sent!.headers['wh-timestamp'], /^\d+$/);
  t.equal(Number(sent!.headers['wh-timestamp']), Math.floor(clock.now().getTime() / 1000));
  t.match(sent!.headers['wh-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
  for (const field of ['id', 'timestamp', 'signature']) {
    t.equal(sent!.headers[`webhook-${field}`], sent!.headers[`wh-${field}`], `webhook-${field} carries the wh-${field} value`);
    t.equal(sent!.headers[`svix-${field}`], sent!.headers[`wh-${field}`], `svix-${field} carries the wh-${field} value`);
  }
  const payload = verifyDelivery(hook.signing_secret, sent!, clock);
  const stored = await events.byId(team.teamId, sentId);
  t.same(payload, { type: 'email.sent', created_at: stored!.created_at, data: emailData('e1') });
  t.same(Object.keys(JSON.parse(sent!.body)), ['type', 'created_at', 'data'], 'the envelope and nothing else');
  const suppression = verifyDelivery(hook.signing_secret, suppressed!, clock);
  t.equal(suppression.type, 'suppression.added');
  t.match(suppression.data, { email: 'gone@rcpt.test', origin: 'manual', source_id: null });
  t.notOk(verifies('whsec_' + Buffer.alloc(32, 1).toString('base64'), sent!, clock), 'another secret does not verify');
  t.notOk(verifies(hook.signing_secret, { ...sent!, body: sent!.body.replace('e1', 'e2') }, clock), 'a changed body does not verify');

  t.equal((await dispatcher.runDue()).attempted, 0, 'nothing is sent twice');
  const attempts = await call(base, 'GET', `/webhooks/${hook.id}/attempts`, { token: team.token });
  t.equal(attempts.body.data.length, 2);
  t.match(attempts.body.data[0], { object: 'webhook_attempt', result: 'succeeded', http_status_code: 200, response: 'ok', error: null, trigger: 'scheduled' });
  t.type(attempts.body.data[0].duration_ms, 'number');
  const messages = await call(base, 'GET', `/webhooks/${hook.id}/events`, { token: team.token });
  t.same(messages.body.data.map((m: { status: string }) => m.status), ['success', 'success']);
  t.same(new Set(messages.body.data.map((m: { id: string }) => m.id)), new Set(got.map((r) => r.headers['wh-id'])), 'message ids are the wh-id values');
});

t.test('the retry schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed', async (t) => {
  const team = await app.newTeam('Retry');
  const hook = await endpoint(team.token, '/retry', ['email.delivered']);
  receiver.setFallback('/retry', { status: 503, body: 'x'.repeat(5000) });
  await emit(team.teamId, 'email.delivered', emailData('r1'));
  t.equal((await dispatcher.runDue()).attempted, 1, 'first attempt at once');
  for (const [i, delay] of retryDelaysMs.entries()) {
    clock.advance(delay - 1);
    t.equal((await dispatcher.runDue()).attempted, 0, `retry ${i + 1} not before ${delay} ms`);
    clock.advance(1);
    t.equal((await dispatcher.runDue()).attempted, 1, `retry ${i + 1} after ${delay} ms`);
  }
  clock.advance(100 * 3_600_000);
  t.equal((await dispatcher.runDue()).attempted, 0, 'no ninth attempt');
  const got = receiver.at('/retry');
  t.equal(got.length, 8);
  t.equal(new Set(got.map((r) => r.headers['wh-id'])).size, 1, 'one wh-id across every retry');
  t.equal(new Set(got.map((r) => r.headers['wh-timestamp'])).size, 8, 'each attempt signed at its own time');
  const attempts = (await call(base, 'GET', `/webhooks/${hook.id}/attempts?limit=100`, { token: team.token })).body.data;
  t.equal(attempts.length, 8, 'every attempt recorded');
  t.same(attempts.map((a: { trigger: string }) => a.trigger), ['retry', 'retry', 'retry', 'retry', 'retry', 'retry', 'retry', 'scheduled']);
  t.ok(attempts.every((a: { http_status_code: number; result: string }) => a.http_status_code === 503 && a.result === 'failed'));
  t.equal(attempts[0].response, 'x'.repeat(1024), 'response kept to 1 KiB');
  const message = (await call(base, 'GET', `/webhooks/${hook.id}/events`, { token: team.token })).body.data[0];
  t.match(message, { status: 'failed', attempts: 8, next_attempt_at: null });
});

t.test('webhook-delivery: abort-message stops retries; timeouts and connection errors are retried', async (t) => {
  const team = await app.newTeam('Abort');
  const abort = await endpoint(team.token, '/abort', ['email.sent']);
  receiver.script('/abort', [{ status: 500, headers: { 'webhook-delivery': 'abort-message' } }]);
  const slow = await endpoint(team.token, '/slow', ['email.sent']);
  receiver.script('/slow', [{ status: 200, delayMs: 4_000 }]);
  await emit(team.teamId, 'email.sent', emailData('a1'));
  await dispatcher.runDue();
  clock.advance(5_000);
  t.equal((await dispatcher.runDue()).attempted, 1, 'only the timed-out one is retried');
  t.equal(receiver.at('/abort').length, 1);
  const abortMsg = (await call(base, 'GET', `/webhooks/${abort.id}/events`, { token: team.token })).body.data[0];
  t.equal(abortMsg.status, 'failed');
  const slowAttempts = (await call(base, 'GET', `/webhooks/${slow.id}/attempts`, { token: team.token })).body.data;
  t.match(slowAttempts[1], { result: 'failed', http_status_code: null, error: /timed out/ });
  t.match(slowAttempts[0], { result: 'succeeded', http_status_code: 200 });
});

t.test('410 Gone disables the endpoint and fails what waits for it; replay is then 422', async (t) => {
  const team = await app.newTeam('Gone');
  const hook = await endpoint(team.token, '/gone', ['email.sent', 'email.delivered']);
  receiver.setFallback('/gone', { status: 410 });
  await emit(team.teamId, 'email.sent', emailData('g1'));
  await dispatcher.runDue();
  const got = await call(base, 'GET', `/webhooks/${hook.id}`, { token: team.token });
  t.equal(got.body.status, 'disabled');
  await emit(team.teamId, 'email.delivered', emailData('g2'));
  t.equal((await dispatcher.runDue()).attempted, 0, 'a disabled endpoint gets nothing new');
  const message = (await call(base, 'GET', `/webhooks/${hook.id}/events`, { token: team.token })).body.data[0];
  const replay = await call(base, 'POST', `/webhooks/${hook.id}/messages/${message.id}/replay`, { token: team.token });
  t.equal(replay.status, 422);
  t.equal(replay.body.name, 'validation_error');
  t.equal(receiver.at('/gone').length, 1);
});

t.test('replay sends the same wh-id again (re-enabled endpoint, SDK and conventions paths)', async (t) => {
  const team = await app.newTeam('Replay');
  const hook = await endpoint(team.token, '/replay', ['email.sent']);
  await emit(team.teamId, 'email.sent', emailData('p1'));
  await dispatcher.runDue();
  const first = receiver.at('/replay')[0]!;
  clock.advance(60_000);
  const r = await call(base, 'POST', `/webhooks/${hook.id}/messages/${first.headers['wh-id']}/replay`, { token: team.token });
  t.same(r.body, { object: 'webhook_event', id: first.headers['wh-id'] });
  await dispatcher.runDue();
  await call(base, 'PATCH', `/webhooks/${hook.id}`, { token: team.token, body: { status: 'disabled' } });
  await call(base, 'PATCH', `/webhooks/${hook.id}`, { token: team.token, body: { status: 'enabled' } });
  const viaSdkPath = await call(base, 'POST', `/webhooks/${hook.id}/events/${first.headers['wh-id']}/replay`, { token: team.token });
  t.equal(viaSdkPath.status, 200);
  await dispatcher.runDue();
  const got = receiver.at('/replay');
  t.equal(got.length, 3);
  t.same(got.map((g) => g.headers['wh-id']), [first.headers['wh-id'], first.headers['wh-id'], first.headers['wh-id']]);
  t.equal(got[1]!.body, first.body, 'the same body');
  t.not(got[1]!.headers['wh-timestamp'], first.headers['wh-timestamp'], 'signed anew');
  t.ok(got.every((g) => verifies(hook.signing_secret, g, clock)));
  const attempts = (await call(base, 'GET', `/webhooks/${hook.id}/events/${first.headers['wh-id']}/attempts`, { token: team.token })).body.data;
  t.same(attempts.map((a: { trigger: string }) => a.trigger), ['replay', 'replay', 'scheduled']);
  const detail = await call(base, 'GET', `/webhooks/${hook.id}/events/${first.headers['wh-id']}`, { token: team.token });
  t.match(detail.body, { object: 'webhook_event', type: 'email.sent', status: 'success', payload: { type: 'email.sent', data: { email_id: 'p1' } } });
});

t.test('the resend SDK: webhooks.events list, get, attempts.list and replay', async (t) => {
  const team = await app.newTeam('SDK events');
  const resend = new Resend(team.token, { baseUrl: base });
  const hook = await endpoint(team.token, '/sdk-events', ['email.delivered']);
  receiver.script('/sdk-events', [{ status: 500, body: 'try later' }]);
  await emit(team.teamId, 'email.delivered', emailData('s1'));
  await dispatcher.runDue();
  clock.advance(5_000);
  await dispatcher.runDue();
  const listed = await resend.webhooks.events.list({ webhookId: hook.id, limit: 10 });
  t.equal(listed.error, null);
  t.equal(listed.data?.data.length, 1);
  const messageId = listed.data!.data[0]!.id;
  t.equal(messageId, receiver.at('/sdk-events')[0]!.headers['wh-id']);
  const got = await resend.webhooks.events.get({ webhookId: hook.id, eventId: messageId });
  t.match(got.data, { object: 'webhook_event', id: messageId, type: 'email.delivered', status: 'success', payload: { type: 'email.delivered' } });
  const attempts = await resend.webhooks.events.attempts.list({ webhookId: hook.id, eventId: messageId });
  t.same(attempts.data?.data.map((a) => [a.http_status_code, a.response]), [[200, 'ok'], [500, 'try later']]);
  const replayed = await resend.webhooks.events.replay({ webhookId: hook.id, eventId: messageId });
  t.same(replayed.data, { object: 'webhook_event', id: messageId });
  await dispatcher.runDue();
  t.equal(receiver.at('/sdk-events').length, 3);
});

t.test('replaying a message that is being sent right now is 409 resource_locked', async (t) => {
  const team = await app.newTeam('Locked');
  const hook = await endpoint(team.token, '/locked', ['email.sent']);
  await emit(team.teamId, 'email.sent', emailData('l1'));
  const db = app.appliance.services.database.db;
  await fanOut(db, clock);
  const now = clock.now();
  const [claimed] = await webhooksRepo(db).claim(hook.id, now.toISOString(), 'another-process', new Date(now.getTime() + 60_000).toISOString(), 1);
  const r = await call(base, 'POST', `/webhooks/${hook.id}/messages/${claimed!.id}/replay`, { token: team.token });
  t.equal(r.status, 409);
  t.equal(r.body.name, 'resource_locked');
  const message = (await call(base, 'GET', `/webhooks/${hook.id}/events/${claimed!.id}`, { token: team.token })).body;
  t.equal(message.status, 'attempting');
});

t.test('rotation: both signatures for 24 hours, each secret verifies; then only the new one', async (t) => {
  const team = await app.newTeam('Rotation');
  const hook = await endpoint(team.token, '/rotate', ['email.sent']);
  const rotated = (await call(base, 'POST', `/webhooks/${hook.id}/rotate-secret`, { token: team.token })).body.signing_secret as string;
  await emit(team.teamId, 'email.sent', emailData('o1'));
  await dispatcher.runDue();
  const during = receiver.at('/rotate')[0]!;
  t.equal(during.headers['wh-signature']!.split(' ').length, 2, 'two signatures, space-separated');
  t.ok(verifies(rotated, during, clock), 'the new secret verifies');
  t.ok(verifies(hook.signing_secret, during, clock), 'the old secret still verifies');
  clock.advance(24 * 3_600_000 + 1000);
  await emit(team.teamId, 'email.sent', emailData('o2'));
  await dispatcher.runDue();
  const after = receiver.at('/rotate')[1]!;
  t.equal(after.headers['wh-signature']!.split(' ').length, 1);
  t.ok(verifies(rotated, after, clock));
  t.notOk(verifies(hook.signing_secret, after, clock), 'the old secret no longer verifies after 24 h');
});

t.test('a stuck endpoint holds only its own slots; others are delivered meanwhile', async (t) => {
  // Its own appliance: the stuck answers must outlast no timeout (this file's is 1.5 s).
  const patient = await startTestAppliance({ env: { SVC_WEBHOOKS_ALLOW_PRIVATE: 'true', SVC_WEBHOOKS_TIMEOUT_MS: '120000' } });
  t.teardown(() => patient.stop());
  const team = await patient.newTeam('Isolation');
  for (const path of ['/stuck', '/fast']) {
    const r = await call(patient.baseUrl, 'POST', '/webhooks', { token: team.token, body: { endpoint: receiver.url + path, events: ['email.clicked'] } });
    t.equal(r.status, 201);
  }
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  receiver.setFallback('/stuck', { status: 200, until: gate });
  const outbox = eventsRepo(patient.appliance.services.database.db);
  for (let i = 0; i < 10; i++) await emitEvent(outbox, team.teamId, 'email.clicked', emailData(`c${i}`), new Date());
  const running = patient.appliance.services.webhookDispatcher.runDue();
  const [fast] = await Promise.all([receiver.waitFor(10, '/fast'), receiver.waitFor(4, '/stuck')]);
  t.equal(fast.length, 10, 'all ten reached the fast endpoint while the other is stuck');
  t.equal(receiver.at('/stuck').length, 4, 'the stuck one holds no more than its concurrency (4) in flight');
  release();
  await withDeadline('the dispatcher run to finish once the stuck endpoint answers', running);
  t.equal(receiver.at('/stuck').length, 10, 'then the stuck endpoint gets its messages too');
  t.equal(receiver.maxConcurrent('/stuck'), 4);
});

t.test('the jobs role delivers by itself (no runDue)', async (t) => {
  const jobs = await startTestAppliance({ roles: ['api', 'jobs'], env: { SVC_WEBHOOKS_ALLOW_PRIVATE: 'true', SVC_WEBHOOKS_POLL_MS: '20' } });
  t.teardown(() => jobs.stop());
  const team = await jobs.newTeam('Loop');
  const r = await call(jobs.baseUrl, 'POST', '/webhooks', { token: team.token, body: { endpoint: `${receiver.url}/loop`, events: ['suppression.added', 'suppression.removed'] } });
  await call(jobs.baseUrl, 'POST', '/suppressions', { token: team.token, body: { email: 'loop@rcpt.test' } });
  await call(jobs.baseUrl, 'DELETE', '/suppressions/loop@rcpt.test', { token: team.token });
  const got = await receiver.waitFor(2, '/loop');
  const types = got.map((g) => verifyDelivery(r.body.signing_secret, g, { now: () => new Date() }).type).sort();
  t.same(types, ['suppression.added', 'suppression.removed']);
});
