import t from 'tap';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestAppliance } from '../helpers/appliance.js';
import { startFakeCloudflare } from '../helpers/fake-cloudflare.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call, type CallResult } from '../helpers/http.js';
import { idOperations, resourceKeys } from '../helpers/faults.js';
import { verifyDomainThroughApi } from '../helpers/sending.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';

// Secrets at rest and in transit: after API keys, DKIM keys (two domains and a rotation), webhook
// signing secrets (and a rotation) and a kept Cloudflare token are made through the API and used
// (a signed send, a signed webhook delivery), none of them appears in plain text in the SQLite
// file, its WAL, the appliance's log lines (at trace level), Redis, the messages and webhooks
// svc sent, or any later API answer — except where the conventions show one on purpose
// (GET /webhooks/{id} and rotation show the endpoint's signing secret).
const logLines: string[] = [];
const cf = await startFakeCloudflare();
const dns = await mailZone(['inbox-one.net']);
const mx = await startFakeMx({ dns: dns.address });
const receiver = await startWebhookReceiver();
const app = await startTestAppliance({
  roles: ['api', 'outbound', 'jobs'],
  logDestination: { write: (line) => { logLines.push(line); } },
  env: {
    SVC_LOG_LEVEL: 'trace', SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port),
    SVC_CLOUDFLARE_API_URL: cf.url, SVC_WEBHOOKS_ALLOW_PRIVATE: 'true', SVC_WEBHOOKS_POLL_MS: '50', SVC_DOMAINS_RECHECK_CRON: '0 0 1 1 *',
    SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000',
  },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); await cf.stop(); await receiver.stop(); });
const services = app.appliance.services;
const team = await app.newTeam('Secrets');
const token = team.token;
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token, body });

// --- make every kind of secret through the API, and use them ---
const secrets = new Map<string, string>(); // what → secret text that must not appear
const tokenSecret = (full: string) => full.split('_').slice(2).join('_');
secrets.set('operator-made token', tokenSecret(token));
const creationAnswers: unknown[] = [];
for (const [name, permission] of [['full', 'full_access'], ['sending', 'sending_access']] as const) {
  const created = (await api('POST', '/api-keys', { name, permission })).body;
  creationAnswers.push(created);
  secrets.set(`${name} key token`, tokenSecret(created.token));
}
const domainId = await verifyDomainThroughApi(app.baseUrl, token, dns, 'secrets-sender.net');
await api('POST', `/domains/${domainId}/dkim/rotate`);
const CF_TOKEN = 'cf-zone-token-0f3c2a9d8e7b6a5c4d3e2f1a0b9c8d7e';
cf.addZone('secrets-auto.net');
cf.addToken(CF_TOKEN, ['secrets-auto.net']);
secrets.set('cloudflare token', CF_TOKEN);
const autoDomain = (await api('POST', '/domains', { name: 'mail.secrets-auto.net' })).body;
const auto = await api('POST', `/domains/${autoDomain.id}/autoconfigure`, { api_token: CF_TOKEN, keep_token: true });
if (auto.body?.token_kept !== true) throw new Error(`autoconfigure: ${JSON.stringify(auto.body)}`);
const hook = (await api('POST', '/webhooks', { endpoint: `${receiver.url}/hook`, events: ['email.sent', 'email.delivered'] })).body;
const firstSecret = hook.signing_secret as string;
const rotated = (await api('POST', `/webhooks/${hook.id}/rotate-secret`)).body;
const currentSecret = rotated.signing_secret as string;
secrets.set('replaced whsec', firstSecret.slice('whsec_'.length));
secrets.set('current whsec', currentSecret.slice('whsec_'.length));
const sent = (await api('POST', '/emails', { from: 'hello@secrets-sender.net', to: 'ann@inbox-one.net', subject: 'Signed', text: 'Hi' })).body;
await waitFor('delivery', async () => mx.received.length > 0);
await waitFor('webhook delivery', async () => receiver.at('/hook').length >= 2);
await services.logWriter.flush();

// The DKIM private keys, read back through the secret box: every line of their PEM bodies.
const keyRows = await services.database.db.selectFrom('domain_dkim_keys').select(['private_key_sealed']).execute();
const pems = keyRows.map((r) => services.secretBox.open(r.private_key_sealed));
for (const [i, pem] of pems.entries()) {
  const lines = pem.split('\n').filter((l) => l && !l.startsWith('-----'));
  for (const [j, line] of lines.entries()) if (line.length >= 40) secrets.set(`DKIM key ${i} line ${j}`, line);
}
const markers = new Map([['PEM header', 'PRIVATE KEY-----']]);

/** The names of the secrets found in `where`. */
function found(where: Buffer | string, allowed: string[] = []): string[] {
  const bytes = typeof where === 'string' ? Buffer.from(where) : where;
  const hits: string[] = [];
  for (const [name, secret] of [...secrets, ...markers]) {
    if (allowed.includes(secret)) continue;
    // Also as it would look inside a JSON string (a PEM line has no characters JSON escapes).
    if (bytes.includes(secret) || bytes.includes(secret.replaceAll('/', '\\/'))) hits.push(name);
  }
  return hits;
}

t.test('the secrets were really made and used', async (t) => {
  t.equal(pems.length, 3, 'two domains, one rotation: three DKIM keys');
  t.ok(secrets.size > 20, `${secrets.size} secret strings to look for`);
  t.match(mx.received[0]!.dkim, 'pass', 'the send was signed with a DKIM key');
  t.ok(receiver.at('/hook')[0]!.headers['webhook-signature'] ?? receiver.at('/hook')[0]!.headers['wh-signature'], 'webhooks were signed');
  t.ok(logLines.length > 5, `${logLines.length} log lines captured`);
  // The scan finds what it looks for: the creation answers hold secrets by design.
  t.same(found(JSON.stringify(creationAnswers)), ['full key token', 'sending key token'], 'the scan sees a token');
  t.same(found(JSON.stringify(hook)), ['replaced whsec'], 'the scan sees a signing secret');
  t.ok(found(JSON.stringify({ pem: pems[0] })).includes('PEM header'), 'the scan sees a PEM key');
});

t.test('not in the SQLite file or its WAL', async (t) => {
  const file = join(app.config.data_dir, 'svc.sqlite');
  for (const path of [file, `${file}-wal`]) {
    // svc runs in WAL mode: while it is open, both files are there to scan.
    t.ok(existsSync(path), `${path} exists`);
    if (!existsSync(path)) continue;
    const bytes = readFileSync(path);
    t.ok(bytes.length > 0, `${path}: ${bytes.length} bytes`);
    t.same(found(bytes), [], path);
  }
});

t.test('not in the log lines', async (t) => {
  t.same(found(logLines.join('')), []);
  for (const line of logLines.slice(0, 40)) t.comment(line.trim().slice(0, 200));
});

t.test('not in Redis (KEYS *, DUMP of each)', async (t) => {
  // Rate buckets and caches expire within seconds: a request now makes sure Redis holds something.
  await api('GET', '/api-keys');
  const keys = await services.redis.keys('*');
  t.ok(keys.length > 0, `${keys.length} keys`);
  for (const key of keys) {
    const dump = await services.redis.dumpBuffer(key);
    t.same(found(Buffer.concat([Buffer.from(key), dump ?? Buffer.alloc(0)])), [], key);
  }
});

t.test('not in what svc sent: the message and the webhook deliveries', async (t) => {
  t.same(found(Buffer.concat(mx.received.map((m) => m.raw))), [], 'the sent message (its DKIM-Signature included)');
  t.same(found(JSON.stringify(receiver.requests)), [], 'webhook requests, headers included');
});

t.test('not in any later API answer, except the signing secret where the conventions show it', async (t) => {
  const ids: Record<string, string> = {
    '/domains/{}': domainId, '/webhooks/{}': hook.id, '/emails/{}': sent.id,
  };
  const messages = (await api('GET', `/webhooks/${hook.id}/messages`)).body.data;
  ids['/webhooks/{}/messages/{}'] = messages[0].id;
  ids['/webhooks/{}/events/{}'] = messages[0].id;
  const answers: [string, CallResult][] = [];
  for (const op of await idOperations(app.baseUrl)) {
    if (op.method !== 'GET') continue;
    const keys = resourceKeys(op.path);
    if (!keys.every((k) => ids[k])) continue;
    const path = op.params.reduce((p, name, i) => p.replace(`{${name}}`, ids[keys[i]!]!), op.path);
    answers.push([path, await api('GET', path)]);
  }
  const doc = (await api('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  for (const path of Object.keys(doc.paths).filter((p) => !p.includes('{') && doc.paths[p]!.get)) answers.push([path, await api('GET', path)]);
  answers.push(['/domains/{auto}', await api('GET', `/domains/${autoDomain.id}`)]);
  for (const status of ['all', 'revoked']) answers.push([`/api-keys?status=${status}`, await api('GET', `/api-keys?status=${status}`)]);
  await services.logWriter.flush();
  const logs = (await api('GET', '/logs?limit=100')).body.data as { id: string; endpoint: string }[];
  t.ok(logs.some((l) => l.endpoint === '/api-keys'), 'the key creations are in the request log');
  for (const log of logs) answers.push([`/logs/${log.id} (${log.endpoint})`, await api('GET', `/logs/${log.id}`)]);
  t.ok(answers.length > 40, `${answers.length} answers read`);
  for (const [path, r] of answers) {
    // GET /webhooks/{id} shows the endpoint's current secret, by design; never the replaced one.
    const allowed = path === `/webhooks/${hook.id}` ? [secrets.get('current whsec')!] : [];
    t.same(found(JSON.stringify(r.body ?? null), allowed), [], `${path} (${r.status})`);
  }
  const shown = answers.find(([p]) => p === `/webhooks/${hook.id}`)![1];
  t.equal(shown.body.signing_secret, currentSecret, 'GET /webhooks/{id} shows the current secret');
});
