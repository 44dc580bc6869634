import t from 'tap';
import { runIdempotent } from '../../core/idempotency.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';

// Idempotency-Key: 24 h replay of the original answer, 409s for a different request or one in
// flight, 400 for a bad length, and no duplicate even when Redis forgets.
const dns = await mailZone();
dns.set('slow-dns.net', 'TIMEOUT');
const app = await startTestAppliance({
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_TIMEOUT_MS: '1500', SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' },
});
t.teardown(async () => { await app.stop(); await dns.stop(); });
const team = await app.newTeam('Idem');
const domains = fakeSendingDomains(app, dns);
domains.add({ teamId: team.teamId, name: 'idem-sender.net' });
const base = app.baseUrl;
const body = (subject: string, to = 'ann@inbox-one.net') => ({ from: 'a@idem-sender.net', to, subject, text: 'hello' });
const send = (b: unknown, key?: string) => call(base, 'POST', '/emails', { token: team.token, body: b, headers: key === undefined ? {} : { 'idempotency-key': key } });
const countBySubject = async (subject: string) =>
  (await call(base, 'GET', `/emails?limit=100&search=${encodeURIComponent(subject)}`, { token: team.token })).body.data.length as number;

t.test('a repeat with the same key and body answers the original, sending once', async (t) => {
  const first = await send(body('once-1'), 'key-once-1');
  t.equal(first.status, 200);
  const again = await send(body('once-1'), 'key-once-1');
  t.equal(again.status, 200);
  t.same(again.body, first.body);
  t.equal(again.headers.get('idempotent-replayed'), 'true');
  t.equal(await countBySubject('once-1'), 1);
});

t.test('the same key with a different body is 409 invalid_idempotent_request', async (t) => {
  await send(body('diff-1'), 'key-diff');
  const r = await send(body('diff-2'), 'key-diff');
  t.equal(r.status, 409);
  t.equal(r.body.name, 'invalid_idempotent_request');
  const batch = await call(base, 'POST', '/emails/batch', { token: team.token, body: [body('diff-1')], headers: { 'idempotency-key': 'key-diff' } });
  t.equal(batch.status, 409, 'the same key on another route is another request');
});

t.test('a key outside 1-256 characters is 400 invalid_idempotency_key', async (t) => {
  for (const key of ['', 'k'.repeat(257)]) {
    const r = await send(body('badkey'), key);
    t.equal(r.status, 400, `length ${key.length}`);
    t.equal(r.body.name, 'invalid_idempotency_key');
  }
  t.equal((await send(body('okkey'), 'k'.repeat(256))).status, 200, '256 is fine');
});

t.test('the same key while the first request runs is 409 concurrent_idempotent_requests', async (t) => {
  // The first request waits on a DNS server that never answers (recipient check).
  const slow = send(body('slow-1', 'x@slow-dns.net'), 'key-slow');
  await waitFor('the first request to ask DNS about slow-dns.net', async () => dns.queries.some((q) => q.name === 'slow-dns.net'));
  const second = await send(body('slow-1', 'x@slow-dns.net'), 'key-slow');
  t.equal(second.status, 409);
  t.equal(second.body.name, 'concurrent_idempotent_requests');
  const first = await slow;
  t.equal(first.status, 200, 'an unanswered DNS lookup does not refuse the recipient');
  const third = await send(body('slow-1', 'x@slow-dns.net'), 'key-slow');
  t.same(third.body, first.body, 'once finished, the answer is replayed');
});

t.test('parallel requests with one key create one email', async (t) => {
  const results = await Promise.all(Array.from({ length: 12 }, () => send(body('race-1'), 'key-race')));
  const ok = results.filter((r) => r.status === 200);
  t.ok(ok.length >= 1);
  t.equal(new Set(ok.map((r) => r.body.id)).size, 1, 'every 200 names the same email');
  t.ok(results.every((r) => r.status === 200 || r.body.name === 'concurrent_idempotent_requests'));
  t.equal(await countBySubject('race-1'), 1);
});

t.test('replays survive a Redis flush (the answer is in SQLite)', async (t) => {
  const first = await send(body('flush-1'), 'key-flush');
  await app.appliance.services.redis.flushall();
  const again = await send(body('flush-1'), 'key-flush');
  t.same(again.body, first.body);
  t.equal(await countBySubject('flush-1'), 1);
});

t.test('without the Redis marker the database still lets only one through', async (t) => {
  const db = app.appliance.services.database.db;
  // Redis that has lost every marker: each request believes it is alone.
  const forgetful = { set: async () => 'OK', del: async () => 1 } as never;
  const deps = { db, redis: forgetful, clock: testClock() };
  const key = 'key-nomarker';
  const outer = await runIdempotent(deps, team.teamId, key, () => 'digest-1', async (remember) => {
    // While this request works, another with the same key runs start to finish.
    const inner = await runIdempotent(deps, team.teamId, key, () => 'digest-1', async (rememberInner) => {
      await rememberInner(db, 200, { id: 'inner' });
      return { id: 'inner' };
    });
    t.same(inner.body, { id: 'inner' });
    await db.transaction().execute((trx) => remember(trx, 200, { id: 'outer' }));
    return { id: 'outer' };
  });
  t.same(outer.body, { id: 'inner' }, 'the later writer gets the stored answer, not its own');
  t.equal(outer.replayed, true);
});

t.test('keys belong to a team, and expire after 24 hours', async (t) => {
  const other = await app.newTeam('Other');
  domains.add({ teamId: other.teamId, name: 'other-idem.net' });
  const mine = await send(body('team-1'), 'key-team');
  const theirs = await call(base, 'POST', '/emails', { token: other.token, body: { ...body('team-1'), from: 'a@other-idem.net' }, headers: { 'idempotency-key': 'key-team' } });
  t.equal(theirs.status, 200, "another team's key is unrelated");
  t.not(theirs.body?.id, mine.body.id);

  const clock = testClock();
  const deps = { db: app.appliance.services.database.db, redis: app.appliance.services.redis, clock };
  let n = 0;
  const work = async (remember: (trx: never, s: number, b: unknown) => Promise<void>) => {
    const answer = { id: `x${++n}` };
    await remember(app.appliance.services.database.db as never, 200, answer);
    return answer;
  };
  const first = await runIdempotent(deps, team.teamId, 'key-expiry', () => 'd', work as never);
  clock.advance(23 * 3600_000);
  t.same((await runIdempotent(deps, team.teamId, 'key-expiry', () => 'd', work as never)).body, first.body, 'within 24 h: replay');
  clock.advance(2 * 3600_000);
  const later = await runIdempotent(deps, team.teamId, 'key-expiry', () => 'd', work as never);
  t.not((later.body as { id: string }).id, (first.body as { id: string }).id, 'after 24 h the key is new again');
});
