import t from 'tap';
import { emitEvent } from '../../core/outbox/index.js';
import { eventsRepo } from '../../storage/repos/index.js';
import { idOperations, randomId, resourceKeys, type IdOperation, type JsonSchema } from '../helpers/faults.js';
import { call, type CallResult } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';

// Cross-team access on every ID route, generated from the running appliance's OpenAPI document:
// team B's full_access key, given team A's real ids (or ids that name nothing, or its own parent
// with A's child), always gets 404 not_found, its answer never carries team A's data, and team
// A's resources are untouched afterwards. A new ID route is covered as soon as it is in the
// document: without a maker below it gets random ids (which must be 404 too).
const MARK = 'zqxmarker';
const receiver = await startWebhookReceiver();
const rig = await startInboundRig({ env: { SVC_WEBHOOKS_ALLOW_PRIVATE: 'true' } });
t.teardown(async () => { await rig.stop(); await receiver.stop(); });
const base = rig.app.baseUrl;
const services = rig.app.appliance.services;
const a = await rig.app.newTeam(`${MARK} Alpha`);
const b = await rig.app.newTeam('Beta');
for (const name of [`${MARK}-inbox.net`, 'beta-inbox.net']) {
  rig.dns.set(name, [{ type: 'MX', exchange: `mx.${name}`, priority: 10 }]);
  rig.dns.set(`mx.${name}`, [{ type: 'A', value: '127.0.0.1' }]);
}
const sending = fakeSendingDomains(rig.app, rig.dns);
sending.add({ teamId: a.teamId, name: `${MARK}-send.net` });
sending.add({ teamId: b.teamId, name: 'beta-send.net' });
rig.addDomain(a.teamId, `${MARK}-recv.net`);
rig.addDomain(b.teamId, 'beta-recv.net');

const ok = (r: CallResult, what: string) => {
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

/** One of each kind of resource for a team; `mark` goes into every name, address and subject. */
async function makeResources(token: string, teamId: string, mark: string, sendDomain: string, recvDomain: string, inbox: string) {
  const api = (method: string, path: string, body?: unknown) => call(base, method, path, { token, body });
  const ids: Record<string, string> = {};
  ids['/api-keys/{}'] = ok(await api('POST', '/api-keys', { name: `${mark} key` }), 'api key').id;
  ids['/domains/{}'] = ok(await api('POST', '/domains', { name: `${mark}-domain.net` }), 'domain').id;
  ids['/suppressions/{}'] = ok(await api('POST', '/suppressions', { email: `${mark}-supp@${inbox}` }), 'suppression').id;
  const sent = ok(await api('POST', '/emails', {
    from: `${mark} <hello@${sendDomain}>`, to: `${mark}-to@${inbox}`, subject: `${mark} subject`,
    text: `${mark} body`, attachments: [{ content: Buffer.from(`${mark} file`).toString('base64'), filename: `${mark}.txt` }],
    scheduled_at: 'in 2 hours',
  }), 'email');
  ids['/emails/{}'] = sent.id;
  ids['/emails/{}/attachments/{}'] = ok(await api('GET', `/emails/${sent.id}/attachments`), 'attachments').data[0].id;
  const received = await rig.send({ from: 'far@far.example', to: [`${mark}-desk@${recvDomain}`] }, rfc822({
    From: `${mark} sender <far@far.example>`, To: `${mark}-desk@${recvDomain}`, Subject: `${mark} received`,
    'Content-Type': 'multipart/mixed; boundary=q',
  }, ['--q', 'Content-Type: text/plain', '', `${mark} text`, '--q', 'Content-Type: application/pdf',
    `Content-Disposition: attachment; filename=${mark}.pdf`, '', '%PDF-1 fake', '--q--', ''].join('\n')));
  ids['/emails/receiving/{}'] = received.id;
  ids['/emails/receiving/{}/attachments/{}'] = ok(await api('GET', `/emails/receiving/${received.id}/attachments`), 'received attachments').data[0].id;
  const hook = ok(await api('POST', '/webhooks', { endpoint: `${receiver.url}/${mark}`, events: ['email.sent'] }), 'webhook');
  ids['/webhooks/{}'] = hook.id;
  await emitEvent(eventsRepo(services.database.db), teamId, 'email.sent', { email_id: sent.id, subject: `${mark} event` }, new Date());
  await services.webhookDispatcher.runDue();
  const message = ok(await api('GET', `/webhooks/${hook.id}/messages`), 'webhook messages').data[0];
  if (!message) throw new Error('no webhook message was fanned out');
  ids['/webhooks/{}/messages/{}'] = message.id;
  ids['/webhooks/{}/events/{}'] = message.id;
  ids['/topics/{}'] = ok(await api('POST', '/topics', { name: `${mark} topic`, default_subscription: 'opt_out' }), 'topic').id;
  ids['/segments/{}'] = ok(await api('POST', '/segments', { name: `${mark} segment`, filter: { all: [{ field: 'first_name', op: 'eq', value: mark }] } }), 'segment').id;
  ids['/contact-properties/{}'] = ok(await api('POST', '/contact-properties', { key: `${mark}_tier`, type: 'string' }), 'contact property').id;
  ids['/contacts/{}'] = ok(await api('POST', '/contacts', {
    email: `${mark}-contact@${inbox}`, first_name: mark, properties: { [`${mark}_tier`]: `${mark} gold` },
    topics: [{ id: ids['/topics/{}'], subscription: 'opt_in' }], segments: [{ id: ids['/segments/{}'] }],
  }), 'contact').id;
  await services.api.logWriter.flush();
  ids['/logs/{}'] = ok(await api('GET', '/logs?limit=1'), 'logs').data[0].id;
  return ids;
}

const mine = await makeResources(a.token, a.teamId, MARK, `${MARK}-send.net`, `${MARK}-recv.net`, `${MARK}-inbox.net`);
const theirs = await makeResources(b.token, b.teamId, 'beta', 'beta-send.net', 'beta-recv.net', 'beta-inbox.net');
const suppressedAddress = `${MARK}-supp@${MARK}-inbox.net`;
const contactAddress = `${MARK}-contact@${MARK}-inbox.net`;
const aIds = new Set(Object.values(mine));

// A body each mutating route accepts, so the answer is about the id and not about the body.
const samples: Record<string, unknown> = {
  name: 'renamed by beta', scheduled_at: 'in 3 hours', status: 'disabled', endpoint: 'http://93.184.215.14/beta',
  events: ['email.sent'], open_tracking: true, expires_in: '10m', api_token: 'b'.repeat(40), keep_token: true, schema: { plan: 'string' },
};
function bodyFor(schema: JsonSchema | undefined): unknown {
  if (!schema) return undefined;
  if (schema.type === 'array') return [];
  const body: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    if (name in samples) body[name] = samples[name];
    else if (schema.required?.includes(name)) body[name] = prop.enum?.[0] ?? 'x';
  }
  return body;
}

const fill = (op: IdOperation, values: string[]) => op.params.reduce((path, name, i) => path.replace(`{${name}}`, encodeURIComponent(values[i]!)), op.path);

/** What team B tries on one route: [label, ids per parameter]. */
function attempts(op: IdOperation): [string, string[]][] {
  const keys = resourceKeys(op.path);
  const out: [string, string[]][] = [['random ids', keys.map(() => randomId())]];
  if (mine[keys[0]!]) out.push(["team A's ids", keys.map((k) => mine[k] ?? randomId())]);
  if (keys.length > 1 && theirs[keys[0]!] && mine[keys.at(-1)!]) out.push(["B's parent, A's child", keys.map((k, i) => (i === 0 ? theirs[k]! : mine[k] ?? randomId()))]);
  if (keys[0] === '/suppressions/{}') out.push(["team A's suppressed address", [suppressedAddress]]);
  if (keys[0] === '/contacts/{}') out.push(["team A's contact address", [contactAddress.toUpperCase()]]);
  if (keys[0] === '/contact-properties/{}') out.push(["team A's property key", [`${MARK}_tier`]]);
  return out;
}

/** The answer's text with what B itself sent taken out: what remains must not name A's things. */
function leaks(body: unknown, sent: string[]): string[] {
  let text = JSON.stringify(body ?? null);
  for (const value of sent) text = text.split(value).join('');
  const found = [...aIds].filter((id) => text.includes(id));
  if (text.toLowerCase().includes(MARK)) found.push(MARK);
  return found;
}

const operations = await idOperations(base);

t.test('the OpenAPI document lists the ID routes', async (t) => {
  t.ok(operations.length >= 35, `${operations.length} operations with a path parameter`);
  const covered = operations.filter((op) => mine[resourceKeys(op.path)[0]!]).length;
  t.comment(`${covered} of ${operations.length} ID operations get team A's real ids; the rest random ids`);
  for (const key of Object.keys(mine)) t.ok(operations.some((op) => resourceKeys(op.path).includes(key)), `a route exists for ${key}`);
});

t.test("team B's key gets 404 not_found on every ID route, and never team A's data", async (t) => {
  for (const op of operations) {
    for (const [label, values] of attempts(op)) {
      const path = fill(op, values);
      const r = await call(base, op.method, path, { token: b.token, body: bodyFor(op.bodySchema) });
      const what = `${op.method} ${op.path} (${label})`;
      t.equal(r.status, 404, what);
      t.equal(r.body?.name, 'not_found', `${what}: ${JSON.stringify(r.body)}`);
      t.same(leaks(r.body, values), [], `${what}: nothing of team A in the answer`);
    }
  }
});

t.test("team A's resources are untouched", async (t) => {
  const get = (path: string) => call(base, 'GET', path, { token: a.token });
  const key = (await get('/api-keys?limit=100')).body.data.find((k: { id: string }) => k.id === mine['/api-keys/{}']);
  t.match(key, { name: `${MARK} key`, status: 'active' }, 'key neither renamed nor revoked');
  t.match((await get(`/domains/${mine['/domains/{}']}`)).body, { name: `${MARK}-domain.net`, open_tracking: false });
  t.equal((await get(`/suppressions/${mine['/suppressions/{}']}`)).status, 200, 'suppression kept');
  const email = (await get(`/emails/${mine['/emails/{}']}`)).body;
  t.match(email, { subject: `${MARK} subject`, last_event: 'scheduled' }, 'email neither canceled nor rescheduled');
  const scheduled = email.scheduled_at as string;
  t.ok(Date.parse(scheduled) < Date.now() + 2.5 * 3600_000, 'still scheduled in about two hours');
  t.equal((await get(`/emails/receiving/${mine['/emails/receiving/{}']}`)).status, 200, 'received email not deleted');
  t.match((await get(`/webhooks/${mine['/webhooks/{}']}`)).body, { status: 'enabled', endpoint: `${receiver.url}/${MARK}` });
  const messages = (await get(`/webhooks/${mine['/webhooks/{}']}/messages`)).body.data;
  t.equal(messages.length, 1, 'no replay created anything');
  const contact = (await get(`/contacts/${mine['/contacts/{}']}`)).body;
  t.match(contact, { email: contactAddress, first_name: MARK, properties: { [`${MARK}_tier`]: { value: `${MARK} gold` } } }, 'contact neither changed nor erased');
  t.same((await get(`/contacts/${mine['/contacts/{}']}/topics`)).body.data.map((x: { id: string; subscription: string }) => [x.id, x.subscription]),
    [[mine['/topics/{}'], 'opt_in']], "its topic choice kept, the topic not deleted");
  t.match((await get(`/contact-properties/${mine['/contact-properties/{}']}`)).body, { key: `${MARK}_tier`, fallback_value: null }, 'property kept');
  t.equal((await call(base, 'GET', '/api-keys', { token: a.token })).status, 200, "A's own key still works");
});
