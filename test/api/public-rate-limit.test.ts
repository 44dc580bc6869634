import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { clientBucket } from '../../core/rate-limit.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { startFaultRedis } from '../helpers/faults-redis.js';
import { call } from '../helpers/http.js';

// The public routes (signed downloads, share pages, brand kit images) carry no key: each client
// address spends from its own bucket, here 5 at once refilling 1 per second. X-Forwarded-For
// names the client only when http_trust_proxy is on.
const redis = await startFaultRedis();
t.teardown(() => redis.stop());
const limits = { SVC_PUBLIC_RATE_LIMIT_BURST: '5', SVC_PUBLIC_RATE_LIMIT_PER_SECOND: '1' };
const proxied = await startTestAppliance({ redis, env: { ...limits, SVC_HTTP_TRUST_PROXY: 'true' } });
const direct = await startTestAppliance({ redis, env: limits });
t.teardown(async () => { await proxied.stop(); await direct.stop(); });
const team = await proxied.newTeam('Public');

const paths = [
  '/downloads/sent/v1.AAAA.AAAA.AAAA', '/downloads/received/v1.AAAA.AAAA.AAAA', '/share/emails/unknown-token-unknown-token', '/api/v1/downloads/sent/x',
  '/brand-kit/00000000-0000-4000-8000-000000000000.png',
];
const get = (base: string, path: string, from?: string) => fetch(base + path, { headers: from ? { 'x-forwarded-for': from } : {} });

/** Requests one after another until the first 429 (at most 30): the passes before it and that answer. */
async function exhaust(base: string, from?: string) {
  const started = performance.now();
  for (let passed = 0; passed < 30; passed++) {
    const res = await get(base, paths[passed % paths.length]!, from);
    if (res.status === 429) return { passed, refused: res, body: await res.json() as { message: string }, seconds: (performance.now() - started) / 1000 };
    if (res.status !== 404) throw new Error(`unexpected ${res.status}`);
    await res.arrayBuffer();
  }
  throw new Error('30 requests and no 429');
}

t.test('a client past its burst gets 429 with the error body and retry-after', async (t) => {
  const { passed, refused, body, seconds } = await exhaust(proxied.baseUrl, '203.0.113.7');
  t.ok(passed >= 5, `the burst of 5 passed (${passed})`);
  t.ok(passed <= 5 + Math.ceil(seconds), `no more than the refill added in ${seconds.toFixed(2)} s`);
  t.same(body, { statusCode: 429, name: 'rate_limit_exceeded', message: body.message });
  t.match(body.message, /Too many requests/);
  t.match(refused.headers.get('retry-after'), /^[1-9]\d*$/);
  t.equal(refused.headers.get('ratelimit-limit'), '5');
  for (const path of paths) t.equal((await get(proxied.baseUrl, path, '203.0.113.7')).status, 429, `${path}: one bucket for every public route`);

  const fresh = await get(proxied.baseUrl, paths[0]!, '203.0.113.8');
  t.equal(fresh.status, 404, 'another address has its own bucket');
  t.same([fresh.headers.get('ratelimit-limit'), fresh.headers.get('ratelimit-remaining')], ['5', '4'], 'an answer let through carries its bucket too');
  const api = await call(proxied.baseUrl, 'GET', '/api-keys', { token: team.token, headers: { 'x-forwarded-for': '203.0.113.7' } });
  t.equal(api.status, 200, 'the API routes spend the team bucket, not this one');
  const ttl = Number((await redis.command('PTTL', 'svc:rate:client:203.0.113.7')).replace(/^:/, ''));
  t.ok(ttl > 0 && ttl <= 6000, `the bucket key expires on its own (${ttl} ms)`);

  await sleep(Number(refused.headers.get('retry-after')) * 1000 + 100);
  t.equal((await get(proxied.baseUrl, paths[0]!, '203.0.113.7')).status, 404, 'after retry-after the refill lets one through');
});

t.test('IPv6 clients share a bucket per /64', async (t) => {
  await exhaust(proxied.baseUrl, '2001:db8:1:2::1');
  t.equal((await get(proxied.baseUrl, paths[0]!, '2001:db8:1:2:ffff:ffff:ffff:ffff')).status, 429, 'the same /64');
  t.equal((await get(proxied.baseUrl, paths[0]!, '2001:db8:1:3::1')).status, 404, 'the next /64');
  t.equal(clientBucket('::ffff:198.51.100.4'), '198.51.100.4', 'IPv4-mapped is the IPv4 address');
  t.equal(clientBucket('2001:DB8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  t.equal(clientBucket(undefined), 'unknown');
});

t.test('without http_trust_proxy, X-Forwarded-For buys no fresh bucket', async (t) => {
  await exhaust(direct.baseUrl, '198.51.100.1');
  t.equal((await get(direct.baseUrl, paths[0]!, '198.51.100.2')).status, 429, 'still the loopback address\'s bucket');
  t.equal((await get(direct.baseUrl, paths[0]!)).status, 429);
});

t.test('fails open: with Redis gone the public routes still answer', async (t) => {
  await exhaust(proxied.baseUrl, '192.0.2.50');
  await redis.kill();
  const res = await get(proxied.baseUrl, paths[0]!, '192.0.2.50');
  t.equal(res.status, 404, 'an exhausted client passes while the bucket cannot be asked');
  await redis.restart();
});
