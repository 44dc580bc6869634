import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestAppliance } from '../helpers/appliance.js';
import { call, type CallResult } from '../helpers/http.js';

// The spec's bucket (the shipped defaults): capacity 10 refilling 10 per second, per team.
const app = await startTestAppliance({ env: { SVC_RATE_LIMIT_BURST: '10', SVC_RATE_LIMIT_PER_SECOND: '10' } });
t.teardown(() => app.stop());
const base = app.baseUrl;

const teamA = await app.newTeam('Bursty');
// A second key of the same team, made directly so that it spends no token.
const secondKey = await app.appliance.services.api.foundation.apiKeys.create(teamA.teamId, { name: 'second' }, { kind: 'operator' });
const teamB = await app.newTeam('Quiet');

// The same capacity refilling 1 per second: what must hold whatever the machine's speed (refusals
// in a burst, two keys sharing a bucket) is checked here, where a refill needs a whole second and
// the margins below are seconds, not the spec bucket's 100 ms.
const slow = await startTestAppliance({ env: { SVC_RATE_LIMIT_BURST: '10', SVC_RATE_LIMIT_PER_SECOND: '1' } });
t.teardown(() => slow.stop());
const slowTeam = await slow.newTeam('Slow refill');
const slowSecondKey = await slow.appliance.services.api.foundation.apiKeys.create(slowTeam.teamId, { name: 'second' }, { kind: 'operator' });

const wholeNumber = /^\d+$/;

/** The rate headers of one answer; `refillPerSecond` bounds how far the bucket is from full. */
function checkHeaders(t: Test, r: CallResult, label: string, refillPerSecond = 10): void {
  t.equal(r.headers.get('ratelimit-limit'), '10', `${label}: ratelimit-limit`);
  const remaining = r.headers.get('ratelimit-remaining');
  const reset = r.headers.get('ratelimit-reset');
  t.match(remaining, wholeNumber, `${label}: ratelimit-remaining`);
  t.ok(Number(remaining) <= 10, `${label}: remaining within capacity`);
  t.match(reset, wholeNumber, `${label}: ratelimit-reset`);
  // Capacity 10 refilling 10/s: never more than one second from full (1/s: ten seconds).
  const fullIn = Math.ceil(10 / refillPerSecond);
  t.ok(Number(reset) <= fullIn, `${label}: reset at most ${fullIn} s`);
}

interface Burst { results: CallResult[]; elapsedSeconds: number }

async function burst(requests: Array<() => Promise<CallResult>>): Promise<Burst> {
  const started = performance.now();
  const results = await Promise.all(requests.map((r) => r()));
  return { results, elapsedSeconds: (performance.now() - started) / 1000 };
}

// Warm up connections and code paths with a third team, so the burst below arrives together.
const warmUp = await app.newTeam('Warm-up');
await burst(Array.from({ length: 8 }, () => () => call(base, 'GET', '/api-keys?limit=1', { token: warmUp.token })));

t.test('a concurrent burst on the spec bucket: two keys share capacity 10, the rest 429, another team unaffected', async (t) => {
  t.equal(app.config.rate_limit_burst, 10, 'the spec\'s capacity');
  t.equal(app.config.rate_limit_per_second, 10, 'the spec\'s refill');
  const tokens = [teamA.token, secondKey.token];
  const n = 24;
  await sleep(1100); // a full bucket for both teams whatever happened before
  const requestsA = Array.from({ length: n }, (_, i) => () => call(base, 'GET', '/api-keys?limit=1', { token: tokens[i % 2] }));
  const requestsB = Array.from({ length: 5 }, () => () => call(base, 'GET', '/api-keys?limit=1', { token: teamB.token }));
  // Team B's requests are interleaved with the burst: its own bucket is untouched by A's.
  const mixed = requestsA.flatMap((r, i) => (i % 5 === 0 && requestsB.length ? [r, requestsB.pop()!] : [r]));
  const { results, elapsedSeconds } = await burst(mixed);
  t.equal(results.length, mixed.length);

  const ok = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status === 429);
  t.equal(ok.length + refused.length, results.length, 'every answer is 200 or 429');

  // Which team each success belongs to: its listed key names the team.
  const okB = ok.filter((r) => r.body.data[0].name === 'Quiet key');
  const okA = ok.length - okB.length;
  t.equal(okB.length, 5, 'the other team is unaffected: all its requests succeed');

  // A's two keys share one bucket: at least the 10 tokens it held, at most those plus the refill
  // during the burst (10/s) — far fewer than the 20 two separate buckets would give.
  const allowance = 10 + Math.floor(elapsedSeconds * 10) + 1;
  t.ok(okA >= 10, `at least the full bucket succeeds (${okA})`);
  t.ok(okA <= allowance, `no more than capacity plus refill succeed (${okA} <= ${allowance})`);
  t.equal(refused.length, n - okA, 'everything else of team A is refused');
  // How many that is depends on how fast this machine answered the burst (the refill runs
  // meanwhile); the refusal itself is checked below, on the slow-refill appliance.
  for (const [i, r] of refused.entries()) checkRefusal(t, r, `429 #${i}`, 10);

  for (const [i, r] of ok.entries()) {
    t.equal(r.headers.get('retry-after'), null, `200 #${i}: no retry-after`);
    checkHeaders(t, r, `200 #${i}`);
  }
  const remainingA = ok.filter((r) => r.body.data[0].name !== 'Quiet key').map((r) => Number(r.headers.get('ratelimit-remaining')));
  t.equal(Math.max(...remainingA), 9, 'the first take from a full bucket leaves 9');
  const remainingB = okB.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort();
  t.ok(remainingB.every((v) => v >= 5), `team B spent only its own tokens (${remainingB.join(',')})`);
});

/** A 429 answer: the spec's error body and the headers of an empty bucket. */
function checkRefusal(t: Test, r: CallResult, label: string, refillPerSecond: number): void {
  t.same(Object.keys(r.body).sort(), ['message', 'name', 'statusCode'], `${label}: the spec's error body`);
  t.equal(r.body.statusCode, 429);
  t.equal(r.body.name, 'rate_limit_exceeded');
  t.type(r.body.message, 'string');
  const retryAfter = r.headers.get('retry-after');
  t.match(retryAfter, /^[1-9]\d*$/, `${label}: retry-after is a whole number, never 0`);
  t.ok(Number(retryAfter) <= Math.ceil(1 / refillPerSecond), `${label}: one token comes back within ${Math.ceil(1 / refillPerSecond)} s`);
  t.equal(r.headers.get('ratelimit-remaining'), '0', `${label}: nothing remains`);
  t.equal(r.headers.get('ratelimit-reset'), String(Math.ceil(10 / refillPerSecond)), `${label}: reset is the time to a full bucket`);
  checkHeaders(t, r, label, refillPerSecond);
}

t.test('a burst beyond capacity is refused with 429 rate_limit_exceeded, and each refusal is logged', async (t) => {
  const n = 24;
  const { results, elapsedSeconds } = await burst(Array.from({ length: n }, (_, i) => () => call(slow.baseUrl, 'GET', '/api-keys?limit=1', { token: i % 2 ? slowTeam.token : slowSecondKey.token })));
  // One token a second: a refusal count short of 3 needs a burst of 24 local requests to take 10 s.
  t.ok(elapsedSeconds < 10, `the burst was answered within 10 s (${elapsedSeconds.toFixed(1)} s)`);
  const ok = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status === 429);
  t.equal(ok.length + refused.length, n, 'every answer is 200 or 429');
  const allowance = 10 + Math.ceil(elapsedSeconds);
  t.ok(ok.length >= 10 && ok.length <= allowance, `the full bucket and at most its refill succeed (${ok.length}, at most ${allowance})`);
  t.ok(refused.length >= n - allowance, `the rest are refused (${refused.length})`);
  for (const [i, r] of refused.entries()) checkRefusal(t, r, `429 #${i}`, 1);
  const remaining = ok.map((r) => Number(r.headers.get('ratelimit-remaining')));
  t.equal(Math.max(...remaining), 9, 'the first take from a full bucket leaves 9');
  t.equal(Math.min(...remaining), 0, 'the last success before a refusal left less than one token');
  // Refused requests were made with the team's credentials: they are in its request log.
  await slow.appliance.services.api.logWriter.flush();
  const logged = await slow.appliance.services.api.foundation.requestLogs.list(slowTeam.teamId, { status: '429', limit: '100' });
  const loggedIds = new Set(logged.data.map((l) => l.request_id));
  t.same(refused.map((r) => r.headers.get('x-request-id')).filter((id) => !loggedIds.has(id!)), [], 'every 429 is logged with its status');
});

t.test('two keys of one team spend from one bucket; unauthenticated routes spend nothing', async (t) => {
  const other = await slow.newTeam('Shared bucket');
  const otherSecond = await slow.appliance.services.api.foundation.apiKeys.create(other.teamId, { name: 'second' }, { kind: 'operator' });
  const started = performance.now();
  const first = await call(slow.baseUrl, 'GET', '/api-keys?limit=1', { token: other.token });
  const more = [];
  for (let i = 0; i < 4; i++) more.push(await call(slow.baseUrl, 'GET', '/api-keys?limit=1', { token: other.token }));
  const health = [];
  for (let i = 0; i < 10; i++) health.push(await call(slow.baseUrl, 'GET', '/health'));
  const second = await call(slow.baseUrl, 'GET', '/api-keys?limit=1', { token: otherSecond.token });
  const elapsed = (performance.now() - started) / 1000;
  t.same(health.map((r) => r.status), Array(10).fill(200));
  t.same(health.map((r) => [r.headers.get('ratelimit-limit'), r.headers.get('ratelimit-remaining'), r.headers.get('ratelimit-reset')]), Array(10).fill(['10', '10', '0']),
    'an unauthenticated route carries the rate headers of a bucket it did not touch');
  t.same([first, ...more, second].map((r) => r.status), Array(6).fill(200), 'the second key is not refused');
  t.equal(first.headers.get('ratelimit-remaining'), '9', 'a full bucket less one');
  // Five takes by the first key, ten unauthenticated calls, then the second key's take: a shared
  // bucket shows 4 plus what came back meanwhile (one token a second), a bucket of its own 9, and
  // ten health calls taking tokens would have emptied it.
  const refilled = Math.floor(elapsed);
  t.ok(refilled < 5, `fewer than 5 tokens came back meanwhile (${elapsed.toFixed(1)} s)`);
  const left = Number(second.headers.get('ratelimit-remaining'));
  t.ok(left <= 4 + refilled, `the second key took from the same bucket (${left} left)`);
  t.ok(left >= 4, `the health calls took nothing from it (${left} left)`);
  checkHeaders(t, second, 'second key', 1);
});

t.test('error answers of authenticated requests carry the headers too', async (t) => {
  const r = await call(base, 'GET', '/api-keys?limit=0', { token: teamB.token });
  t.equal(r.status, 422);
  checkHeaders(t, r, '422');
  const missing = await call(base, 'PATCH', `/api-keys/${crypto.randomUUID()}`, { token: teamB.token, body: { name: 'x' } });
  t.equal(missing.status, 404);
  checkHeaders(t, missing, '404');
});

t.test('after waiting ~1.1 s the team succeeds again with a full bucket', async (t) => {
  await burst(Array.from({ length: 15 }, () => () => call(base, 'GET', '/api-keys?limit=1', { token: teamA.token })));
  await sleep(1100);
  const { results } = await burst(Array.from({ length: 10 }, (_, i) => () => call(base, 'GET', '/api-keys?limit=1', { token: i % 2 ? teamA.token : secondKey.token })));
  t.same(results.map((r) => r.status), Array(10).fill(200), 'the ten tokens of a full bucket');
  for (const [i, r] of results.entries()) checkHeaders(t, r, `refilled #${i}`);
  const remaining = results.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => b - a);
  t.equal(remaining[0], 9);
});

t.test('every response carries the rate headers: unknown routes, refusals before a key is read, documents', async (t) => {
  const cases: [string, () => Promise<CallResult>, number][] = [
    ['404 unknown route', () => call(base, 'GET', '/no-such-route'), 404],
    ['404 unknown route under /api/v1', () => call(base, 'GET', '/api/v1/no-such-route'), 404],
    ['404 unknown route with a bad key', () => call(base, 'GET', '/no-such-route', { token: 'svc_not-a-key' }), 404],
    ['405 wrong method', () => call(base, 'PUT', '/api-keys'), 405],
    ['401 no key', () => call(base, 'GET', '/api-keys'), 401],
    ['401 a bad key', () => call(base, 'GET', '/api-keys', { token: 'svc_not-a-key' }), 401],
    ['403 no User-Agent', () => call(base, 'GET', '/api-keys', { token: teamB.token, noUserAgent: true }), 403],
    ['200 health', () => call(base, 'GET', '/health'), 200],
    ['200 the OpenAPI document', () => call(base, 'GET', '/openapi.json'), 200],
  ];
  for (const [label, request, status] of cases) {
    const r = await request();
    t.equal(r.status, status, label);
    checkHeaders(t, r, label);
  }
});

t.test('a 404 with a good key shows its team\'s bucket and spends nothing from it', async (t) => {
  const team = await slow.newTeam('Lost');
  for (let i = 0; i < 6; i++) t.equal((await call(slow.baseUrl, 'GET', '/api-keys?limit=1', { token: team.token })).status, 200);
  const lost = [];
  for (let i = 0; i < 5; i++) lost.push(await call(slow.baseUrl, 'GET', '/no-such-route', { token: team.token }));
  t.same(lost.map((r) => r.status), Array(5).fill(404));
  for (const [i, r] of lost.entries()) checkHeaders(t, r, `404 #${i}`, 1);
  const remaining = lost.map((r) => Number(r.headers.get('ratelimit-remaining')));
  t.ok(remaining[0]! < 10, `the team's bucket, six tokens spent (${remaining[0]} left), not a full one`);
  t.same([...remaining].sort((a, b) => a - b), remaining, `the 404s took nothing: never fewer left than before (${remaining.join(', ')})`);
  const after = await call(slow.baseUrl, 'GET', '/api-keys?limit=1', { token: team.token });
  t.ok(Number(after.headers.get('ratelimit-remaining')) >= remaining.at(-1)! - 1, 'the next real request spends one from where the 404s left it');
});
