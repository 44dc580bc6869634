import t from 'tap';
import { createResolver, checkServer } from '../../dns/resolver.js';
import { resolveMailRoute } from '../../dns/mx.js';
import { checkRecipientDomain, likelyTypo } from '../../dns/recipient-domain.js';
import { startDnsServer } from '../helpers/dns-server.js';

const dns = await startDnsServer({
  'two-mx.test-zone.net': [
    { type: 'MX', exchange: 'mx2.two-mx.test-zone.net', priority: 20 },
    { type: 'MX', exchange: 'MX1.two-mx.test-zone.net.', priority: 10 },
  ],
  'implicit.test-zone.net': [{ type: 'A', value: '127.0.0.9' }],
  'nullmx.test-zone.net': [{ type: 'MX', exchange: '.', priority: 0 }],
  'txt-only.test-zone.net': [{ type: 'TXT', value: ['v=spf1', ' -all'] }],
  'alias.test-zone.net': [{ type: 'CNAME', value: 'implicit.test-zone.net' }],
  'gmail.com': [{ type: 'MX', exchange: 'mx.gmail.com', priority: 5 }],
});
t.teardown(() => dns.stop());
const resolver = createResolver({ servers: [dns.address], timeoutMs: 300, tries: 1 });

t.test('MX records come back in preference order, lower-cased without the root dot', async (t) => {
  const route = await resolveMailRoute(resolver, 'two-mx.test-zone.net');
  t.same(route, { kind: 'hosts', implicit: false, hosts: [
    { exchange: 'mx1.two-mx.test-zone.net', priority: 10 },
    { exchange: 'mx2.two-mx.test-zone.net', priority: 20 },
  ] });
});

t.test('no MX but an address record is an implicit MX to the domain itself', async (t) => {
  t.same(await resolveMailRoute(resolver, 'implicit.test-zone.net'), { kind: 'hosts', implicit: true, hosts: [{ exchange: 'implicit.test-zone.net', priority: 0 }] });
});

t.test('null MX, a name with no address, a missing name and a failing server are told apart', async (t) => {
  t.same(await resolveMailRoute(resolver, 'nullmx.test-zone.net'), { kind: 'null_mx' });
  t.same(await resolveMailRoute(resolver, 'txt-only.test-zone.net'), { kind: 'no_mail' });
  t.same(await resolveMailRoute(resolver, 'nothing-here.test-zone.net'), { kind: 'no_domain' });
  dns.set('broken.test-zone.net', 'SERVFAIL');
  const broken = await resolveMailRoute(resolver, 'broken.test-zone.net');
  t.equal(broken.kind, 'temporary');
});

t.test('TXT strings and CNAME chains arrive as published', async (t) => {
  t.same(await resolver.resolveTxt('txt-only.test-zone.net'), [['v=spf1', ' -all']]);
  t.same(await resolver.resolveCname('alias.test-zone.net'), ['implicit.test-zone.net']);
  t.same(await resolver.resolve4('alias.test-zone.net'), ['127.0.0.9']);
});

t.test('recipient domains: reserved names, IP literals, typos, no mail, and DNS trouble', async (t) => {
  for (const reserved of ['example.com', 'mail.example.org', 'box.test', 'host.local', 'a.invalid', 'localhost', 'x.example']) {
    t.match(await checkRecipientDomain(resolver, reserved), { ok: false, cause: 'reserved_domain' }, reserved);
  }
  t.match(await checkRecipientDomain(resolver, '[127.0.0.1]'), { ok: false, cause: 'ip_literal' });
  t.match(await checkRecipientDomain(resolver, '10.0.0.1'), { ok: false, cause: 'ip_literal' });
  t.same(await checkRecipientDomain(resolver, 'gmial.com'), { ok: false, cause: 'likely_typo', suggestion: 'gmail.com' });
  t.same(await checkRecipientDomain(resolver, 'gmail.com'), { ok: true });
  t.same(await checkRecipientDomain(resolver, 'nullmx.test-zone.net'), { ok: false, cause: 'no_mail' });
  t.same(await checkRecipientDomain(resolver, 'nothing-here.test-zone.net'), { ok: false, cause: 'no_domain' });
  t.match(await checkRecipientDomain(resolver, 'broken.test-zone.net'), { ok: true, unverified: String });
});

t.test('typo suggestions stay away from short and real names', async (t) => {
  t.equal(likelyTypo('hotmial.com'), 'hotmail.com');
  t.equal(likelyTypo('yahooo.com'), 'yahoo.com');
  t.equal(likelyTypo('outlok.com'), 'outlook.com');
  t.equal(likelyTypo('mail.com'), undefined);
  t.equal(likelyTypo('act.net'), undefined);
  t.equal(likelyTypo('mycompany.com'), undefined);
});

t.test('resolver servers must be IP addresses with optional ports', async (t) => {
  t.equal(checkServer('127.0.0.1:5353'), '127.0.0.1:5353');
  t.equal(checkServer('[::1]:53'), '[::1]:53');
  t.equal(checkServer('::1'), '::1');
  t.throws(() => checkServer('dns.google:53'), /IP address/);
  t.throws(() => checkServer('127.0.0.1:99999'), /port/);
});
