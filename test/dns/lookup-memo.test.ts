import t from 'tap';
import { lookupMemo } from '../../dns/lookup-memo.js';

// The memo behind the recipient checks' resolver, delivery routes and MTA-STS policies: what it
// keeps, for how long, and what it asks again.
t.test('an answer it may not keep is asked again; one it keeps is not, until its time is up', async (t) => {
  let now = 0;
  const asked: string[] = [];
  const memo = lookupMemo(async (key) => { asked.push(key); return key.startsWith('temp') ? 'temporary' : 'route'; }, {
    ttlMs: 1_000, maxEntries: 10, now: () => now, keepsAnswer: (answer) => answer !== 'temporary',
  });
  t.equal(await memo('a.net'), 'route');
  t.equal(await memo('a.net'), 'route');
  t.equal(await memo('temp.net'), 'temporary');
  t.equal(await memo('temp.net'), 'temporary');
  t.same(asked, ['a.net', 'temp.net', 'temp.net'], 'the kept answer was asked once, the other each time');
  now = 1_000;
  await memo('a.net');
  t.same(asked.filter((k) => k === 'a.net').length, 2, 'asked again once its time was up');
});

t.test('failures are dropped unless kept; no time asks every time', async (t) => {
  let calls = 0;
  const failing = async () => { calls++; throw Object.assign(new Error('nope'), { code: calls === 1 ? 'ETIMEOUT' : 'ENOTFOUND' }); };
  const memo = lookupMemo(failing, { ttlMs: 1_000, maxEntries: 10, now: () => 0, keepsFailure: (err) => (err as { code?: string }).code === 'ENOTFOUND' });
  await t.rejects(memo('x'), { code: 'ETIMEOUT' });
  await t.rejects(memo('x'), { code: 'ENOTFOUND' }, 'a timeout was not kept');
  await t.rejects(memo('x'), { code: 'ENOTFOUND' });
  t.equal(calls, 2, '"not found" was kept');
  const ask = async (key: string) => key;
  t.equal(lookupMemo(ask, { ttlMs: 0, maxEntries: 10, now: () => 0 }), ask, 'ttl 0 is the lookup itself');
});
