import t from 'tap';
import { cachedResolver, memoizedResolver } from '../../dns/cache.js';
import { createResolver } from '../../dns/resolver.js';
import { connectRedis } from '../../storage/redis/index.js';
import { redisDnsCacheStore } from '../../storage/redis/index.js';
import { find, publish, startDomainsRig, type WireRecord } from '../helpers/domain-fixtures.js';

const rig = await startDomainsRig({ SVC_MAIL_FROM_RECORDS: 'mx_txt' });
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('MX mode');

t.test('mail_from_records=mx_txt gives an MX and an SPF TXT at the return path; both must verify to send', async (t) => {
  const created = (await rig.api(team.token, 'POST', '/domains', { name: 'mxmode-corp.net' })).body;
  const spf = (created.records as WireRecord[]).filter((r) => r.record === 'SPF');
  t.same(spf.map((r) => [r.type, r.name, r.value, r.priority]), [
    ['MX', 'send', 'bounces.us.svc-host.net.', 10],
    ['TXT', 'send', 'v=spf1 include:bounces.us.svc-host.net -all', undefined],
  ]);
  publish(rig.dns, 'mxmode-corp.net', find(created.records, 'DKIM'));
  publish(rig.dns, 'mxmode-corp.net', spf[0]!);
  rig.clock.advance(16_000);
  const half = await rig.api(team.token, 'POST', `/domains/${created.id}/verify`);
  t.equal(half.body.status, 'partially_verified');
  t.notOk(await rig.app.appliance.services.domains.sendingDomain(team.teamId, 'mxmode-corp.net'), 'the SPF TXT is missing');
  publish(rig.dns, 'mxmode-corp.net', spf[1]!);
  rig.clock.advance(16_000);
  t.equal((await rig.api(team.token, 'POST', `/domains/${created.id}/verify`)).body.status, 'verified');
  t.ok(await rig.app.appliance.services.domains.sendingDomain(team.teamId, 'mxmode-corp.net'));
});

t.test('the delivery DNS cache keeps answers and "no such name" in Redis for its TTL; failures are not kept', async (t) => {
  const redis = await connectRedis({ url: rig.app.redis.url, commandTimeoutMs: 1000 });
  t.teardown(() => redis.disconnect());
  const inner = createResolver({ servers: [rig.dns.address], timeoutMs: 500, tries: 1 });
  const resolver = cachedResolver(inner, redisDnsCacheStore(redis), 60);
  rig.dns.set('cached-corp.net', [{ type: 'MX', exchange: 'mx1.cached-corp.net', priority: 10 }]);
  const hosts = async (name: string, r = resolver) => (await r.resolveMx(name)).map((mx) => `${mx.priority} ${mx.exchange}`);
  const asked = () => rig.dns.queries.filter((q) => q.name === 'cached-corp.net' || q.name === 'gone-corp.net' || q.name === 'broken-corp.net').length;

  t.same(await hosts('cached-corp.net'), ['10 mx1.cached-corp.net']);
  const first = asked();
  rig.dns.set('cached-corp.net', [{ type: 'MX', exchange: 'mx2.cached-corp.net', priority: 10 }]);
  t.same(await hosts('Cached-Corp.net'), ['10 mx1.cached-corp.net'], 'served from the cache');
  t.equal(asked(), first, 'DNS was not asked again');
  t.ok((await redis.ttl('svc:dns:MX:cached-corp.net')) > 0, 'kept with a TTL');

  await t.rejects(resolver.resolveMx('gone-corp.net'), { code: 'ENOTFOUND' });
  const afterMiss = asked();
  await t.rejects(resolver.resolveMx('gone-corp.net'), { code: 'ENOTFOUND' }, 'the negative answer is cached too');
  t.equal(asked(), afterMiss);

  rig.dns.set('broken-corp.net', 'SERVFAIL');
  await t.rejects(resolver.resolveMx('broken-corp.net'));
  rig.dns.set('broken-corp.net', [{ type: 'MX', exchange: 'mx.broken-corp.net', priority: 5 }]);
  t.same(await hosts('broken-corp.net'), ['5 mx.broken-corp.net'], 'a failure was not cached');

  const offline = cachedResolver(inner, { get: async () => { throw new Error('redis down'); }, set: async () => { throw new Error('redis down'); } }, 60);
  t.same(await hosts('broken-corp.net', offline), ['5 mx.broken-corp.net'], 'a cache that cannot answer is skipped');
  t.equal(cachedResolver(inner, redisDnsCacheStore(redis), 0), inner, 'TTL 0 turns the cache off');
});

t.test('recipient checks keep answers in the process for a few seconds, bounded; failures are not kept', async (t) => {
  const inner = createResolver({ servers: [rig.dns.address], timeoutMs: 500, tries: 1 });
  let now = 0;
  const resolver = memoizedResolver(inner, { ttlMs: 10_000, maxEntries: 2, now: () => now });
  const names = ['memo-a.net', 'memo-b.net', 'memo-c.net', 'memo-gone.net', 'memo-broken.net'];
  const asked = (name: string) => rig.dns.queries.filter((q) => q.name === name).length;
  for (const name of names.slice(0, 3)) rig.dns.set(name, [{ type: 'MX', exchange: `mx1.${name}`, priority: 10 }]);
  const exchange = async (name: string) => (await resolver.resolveMx(name))[0]?.exchange;

  const together = await Promise.all([exchange('memo-a.net'), exchange('MEMO-A.net')]);
  t.same(together, ['mx1.memo-a.net', 'mx1.memo-a.net']);
  t.equal(asked('memo-a.net'), 1, 'two lookups at once, one question');
  rig.dns.set('memo-a.net', [{ type: 'MX', exchange: 'mx2.memo-a.net', priority: 10 }]);
  now = 9_999;
  t.equal(await exchange('memo-a.net'), 'mx1.memo-a.net', 'kept within its time');
  now = 10_000;
  t.equal(await exchange('memo-a.net'), 'mx2.memo-a.net', 'asked again after it');
  t.equal(asked('memo-a.net'), 2);

  await exchange('memo-b.net');
  await exchange('memo-c.net');
  t.equal(await exchange('memo-a.net'), 'mx2.memo-a.net');
  t.equal(asked('memo-a.net'), 3, 'two names at most: the oldest went first');

  await t.rejects(resolver.resolveMx('memo-gone.net'), { code: 'ENOTFOUND' });
  await t.rejects(resolver.resolveMx('memo-gone.net'), { code: 'ENOTFOUND' });
  t.equal(asked('memo-gone.net'), 1, '"no such name" is kept');
  rig.dns.set('memo-broken.net', 'SERVFAIL');
  await t.rejects(resolver.resolveMx('memo-broken.net'));
  rig.dns.set('memo-broken.net', [{ type: 'MX', exchange: 'mx.memo-broken.net', priority: 5 }]);
  t.equal(await exchange('memo-broken.net'), 'mx.memo-broken.net', 'a failure was not kept');
  t.equal(memoizedResolver(inner, { ttlMs: 0, maxEntries: 2, now: () => now }), inner, 'no time turns it off');
});

t.test('verification never uses the cache', async (t) => {
  const created = (await rig.api(team.token, 'POST', '/domains', { name: 'nocache-corp.net' })).body;
  const delivery = rig.app.appliance.services.deliveryResolver;
  const dkim = find(created.records, 'DKIM');
  await t.rejects(delivery.resolveTxt(`${dkim.name}.nocache-corp.net`), 'the delivery cache now holds "no such name"');
  for (const r of created.records as WireRecord[]) publish(rig.dns, 'nocache-corp.net', r);
  rig.clock.advance(16_000);
  t.has(find((await rig.api(team.token, 'POST', `/domains/${created.id}/verify`)).body.records, 'DKIM'), { status: 'verified' });
});
