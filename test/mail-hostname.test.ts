import t from 'tap';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startAppliance } from '../bin/appliance.js';
import type { ApiRole } from '../bin/roles/api.js';
import { fqdnProblem } from '../config/hostname.js';
import { ConfigError, loadConfig } from '../config/load.js';
import { call } from './helpers/http.js';
import { startTestRedis } from './helpers/redis.js';

// mail_hostname is the EHLO name and the target of every domain's MX, MAIL FROM and tracking
// records. A bare `vm` (the machine's own name when mail_hostname is empty, or a value set so)
// would publish records pointing nowhere: svc refuses it at start in one line.
const root = mkdtempSync(join(tmpdir(), 'svc-hostname-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const redis = await startTestRedis();
t.teardown(() => redis.stop());
let n = 0;

function configFor(env: Record<string, string> = {}) {
  return loadConfig({ SVC_DATA_DIR: join(root, String(n++)), SVC_HTTP_PORT: '0', SVC_REDIS_URL: redis.url, SVC_LOG_LEVEL: 'silent', ...env });
}

t.test('a fully qualified name is one of at least two host name labels', async (t) => {
  for (const good of ['mail.example.com', 'mail.example.com.', 'mx-1.eu.svc-host.net', 'a.b']) t.equal(fqdnProblem(good), undefined, good);
  const bad: [string, RegExp][] = [
    ['vm', /single label/], ['localhost', /single label/], ['vm.', /single label/], ['10.0.0.1', /address/], ['::1', /address/],
    ['mail..example.com', /"" is not a host name label/], ['-mx.example.com', /"-mx"/], ['mx_1.example.com', /"mx_1"/],
    ['mail.example.123', /last label is a number/], [`${'a'.repeat(64)}.example.com`, /is not a host name label/], [`${'a.'.repeat(127)}com`, /longer than 253/],
  ];
  for (const [name, want] of bad) t.match(fqdnProblem(name), want, name);
});

t.test('mail_hostname set to a bare name, or a region host that is one, is a ConfigError naming it', async (t) => {
  t.throws(() => configFor({ SVC_MAIL_HOSTNAME: 'vm' }), new ConfigError('SVC_MAIL_HOSTNAME', 'must be a fully qualified host name like mail.example.com; "vm" is a single label, not a fully qualified name'));
  t.equal(configFor({ SVC_MAIL_HOSTNAME: 'mx.example.net.' }).mail_hostname, 'mx.example.net', 'the root dot of an absolute name is dropped');
  t.throws(() => configFor({ SVC_REGIONS: JSON.stringify({ 'us-east-1': { mail_from_host: 'bounces' } }) }), /SVC_REGIONS: us-east-1\.mail_from_host must be a fully qualified host name; "bounces" is a single label/);
  t.throws(() => configFor({ SVC_REGIONS: JSON.stringify({ 'eu-west-1': { ehlo_name: 'vm' } }) }), /eu-west-1\.ehlo_name must be a fully qualified/);
  t.equal(configFor({ SVC_REGIONS: JSON.stringify({ 'us-east-1': { source_address: '192.0.2.1' } }) }).regions['us-east-1']?.source_address, '192.0.2.1', 'an address where an address belongs');
});

t.test('mail_hostname empty on a machine named `vm`: start is refused before anything is made', async (t) => {
  const config = configFor();
  const refused = startAppliance({ config, roles: ['api'], logger: pino({ level: 'silent' }), version: 'test', systemHostname: 'vm' });
  await t.rejects(refused, new ConfigError('SVC_MAIL_HOSTNAME', 'is empty and this machine\'s host name "vm" is a single label, not a fully qualified name; set mail_hostname to this host\'s public DNS name, like mail.example.com'));
  t.notOk(existsSync(config.data_dir), 'not even the data folder was made');
});

t.test('a machine with a fully qualified name: domains\' records target it, fully qualified', async (t) => {
  const config = configFor();
  const app = await startAppliance({ config, roles: ['api'], logger: pino({ level: 'silent' }), version: 'test', systemHostname: 'mx.example.net' });
  t.teardown(() => app.stop());
  const api = app.running.find((r) => r.name === 'api') as ApiRole;
  const team = await app.services.api.foundation.teams.create('Hosts');
  const key = await app.services.api.foundation.apiKeys.create(team.id, { name: 'k' }, { kind: 'operator' });
  const created = await call(`http://127.0.0.1:${api.http.port}`, 'POST', '/domains', { token: key.token, body: { name: 'hosts-corp.net' } });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const targets = (created.body.records as { type: string; value: string }[]).filter((r) => r.type !== 'TXT');
  t.ok(targets.length >= 2, 'MX/CNAME records are given');
  for (const r of targets) {
    t.equal(r.value, 'mx.example.net.', `${r.type} targets the machine's name, fully qualified with its trailing dot`);
    t.equal(fqdnProblem(r.value), undefined, 'a fully qualified name');
  }
});
