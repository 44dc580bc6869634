import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { eventsOf, mailZone } from '../helpers/email-fixtures.js';

// POST /emails/batch: strict and permissive, at most 100, one rate-limit token, idempotent.
// The default rate limit (10 per second) is kept so the token cost is visible.
const dns = await mailZone();
// The spec's bucket: the batch's one token shows in ratelimit-remaining.
const app = await startTestAppliance({ env: { SVC_DNS_SERVERS: dns.address, SVC_RATE_LIMIT_BURST: '10', SVC_RATE_LIMIT_PER_SECOND: '10' } });
t.teardown(async () => { await app.stop(); await dns.stop(); });
const team = await app.newTeam('Batch');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'batch-sender.net' });
const base = app.baseUrl;
const item = (subject: string, to: string | string[] = 'ann@inbox-one.net') => ({ from: 'b@batch-sender.net', to, subject, text: 'hi' });
const batch = (items: unknown, headers: Record<string, string> = {}) => call(base, 'POST', '/emails/batch', { token: team.token, body: items, headers });
const pause = () => new Promise((r) => setTimeout(r, 1100));
const count = async (subject: string) => {
  await pause();
  return (await call(base, 'GET', `/emails?limit=100&search=${encodeURIComponent(subject)}`, { token: team.token })).body.data.length as number;
};

t.test('a batch of 100 costs one rate-limit token', async (t) => {
  await pause();
  const items = Array.from({ length: 100 }, (_, i) => item(`hundred-${i}`));
  const r = await batch(items);
  t.equal(r.status, 200);
  t.equal(r.body.data.length, 100);
  t.equal(new Set(r.body.data.map((d: { id: string }) => d.id)).size, 100);
  t.equal(r.headers.get('ratelimit-remaining'), '9');
  t.notOk('errors' in r.body, 'strict answers carry no errors');
});

t.test('strict (the default): one bad item refuses the whole batch', async (t) => {
  await pause();
  const r = await batch([item('strict-a'), { ...item('strict-b'), from: 'x@unverified.net' }, item('strict-c')]);
  t.equal(r.status, 403);
  t.equal(r.body.name, 'validation_error');
  t.match(r.body.message, /emails\[1\]/);
  t.equal(await count('strict-'), 0, 'nothing was sent');
  const missing = await batch([item('strict-d'), { from: 'b@batch-sender.net', subject: 'x', text: 'y' }], { 'x-batch-validation': 'strict' });
  t.equal(missing.status, 422);
  t.equal(missing.body.name, 'missing_required_field');
});

t.test('permissive: good items go, bad ones are listed by index', async (t) => {
  await pause();
  const r = await batch([item('perm-a'), { ...item('perm-b'), subject: 'a\nb' }, item('perm-c'), { ...item('perm-d'), to: 'x@example.com' }], { 'x-batch-validation': 'permissive' });
  t.equal(r.status, 200);
  t.equal(r.body.data.length, 3, 'the email whose only recipient is refused is still created, suppressed');
  t.same(r.body.errors.map((e: { index: number }) => e.index), [1]);
  t.type(r.body.errors[0].message, 'string');
  const refusedOnly = r.body.data[2].id;
  const events = await eventsOf(app, refusedOnly);
  t.match(events, [{ type: 'email.suppressed', data: { suppressed: { reason: 'invalid_recipient' } } }]);
});

t.test('size limits and a bad mode', async (t) => {
  await pause();
  const tooMany = await batch(Array.from({ length: 101 }, (_, i) => item(`over-${i}`)));
  t.equal(tooMany.status, 422);
  t.equal(tooMany.body.name, 'validation_error');
  const empty = await batch([]);
  t.equal(empty.status, 422);
  const mode = await batch([item('mode')], { 'x-batch-validation': 'lenient' });
  t.equal(mode.status, 400);
  t.equal(mode.body.name, 'validation_error');
});

t.test('a batch replays under its Idempotency-Key', async (t) => {
  await pause();
  const first = await batch([item('ib-a'), item('ib-b')], { 'idempotency-key': 'batch-key-1' });
  const again = await batch([item('ib-a'), item('ib-b')], { 'idempotency-key': 'batch-key-1' });
  t.same(again.body, first.body);
  t.equal(await count('ib-'), 2);
});
