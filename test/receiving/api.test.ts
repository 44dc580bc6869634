import t from 'tap';
import { Resend } from 'resend';
import { fixedLimits } from '../../core/receiving/ports.js';
import { testClock } from '../helpers/test-clock.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';

// The receiving API's list rules (newest first, search, inclusive dates, cursors), the spec's
// dropped reasons, and the resend SDK's receiving calls against svc.
const clock = testClock(new Date('2026-11-20T10:00:00Z'));
const rig = await startInboundRig({ clock });
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Lists');
rig.addDomain(team.teamId, 'lists-inbox.net');
const services = rig.app.appliance.services;

async function receive(subject: string, from = 'Sender <sender@far.example>', to = 'desk@lists-inbox.net', at?: string) {
  if (at) clock.set(new Date(at));
  const sent = await rig.send({ from: 'env@far.example', to: [to] }, rfc822({ From: from, To: to, Subject: subject }, `Body of ${subject}`));
  return sent.id;
}

const ids = {
  a: await receive('Invoice 100% paid', 'Billing Bot <billing@far.example>', 'desk@lists-inbox.net', '2026-11-20T10:00:00.000Z'),
  b: await receive('Invoice 100 percent', 'Ann Example <ann@far.example>', 'desk@lists-inbox.net', '2026-11-20T11:00:00.000Z'),
  c: await receive('order_42 shipped', 'Ann Example <ann@far.example>', 'sales@lists-inbox.net', '2026-11-20T12:00:00.000Z'),
  d: await receive('orderx42 shipped', 'Zed <zed@far.example>', 'desk@lists-inbox.net', '2026-11-20T13:00:00.000Z'),
};
const list = async (qs: string) => (await rig.api(team.token, 'GET', `/emails/receiving${qs}`)).body;
const idsOf = (body: { data: { id: string }[] }) => body.data.map((e) => e.id);

t.test('newest first, with id cursors both ways', async (t) => {
  const all = await list('');
  t.same(idsOf(all), [ids.d, ids.c, ids.b, ids.a]);
  t.equal(all.has_more, false);
  t.notOk('html' in all.data[0], 'list items carry no bodies');
  const first = await list('?limit=2');
  t.same(idsOf(first), [ids.d, ids.c]);
  t.equal(first.has_more, true);
  const next = await list(`?limit=2&after=${ids.c}`);
  t.same(idsOf(next), [ids.b, ids.a]);
  t.equal(next.has_more, false);
  const back = await list(`?limit=1&before=${ids.b}`);
  t.same(idsOf(back), [ids.c]);
  const bad = await rig.api(team.token, 'GET', '/emails/receiving?limit=101');
  t.equal(bad.status, 422);
  t.equal(bad.body.name, 'invalid_parameter');
});

t.test('search: subject, sender address or name, recipients; % and _ are literal; case-insensitive', async (t) => {
  t.same(idsOf(await list('?search=100%25')), [ids.a], '% is a literal percent sign');
  t.same(idsOf(await list('?search=order_42')), [ids.c], '_ is a literal underscore');
  t.same(idsOf(await list('?search=INVOICE')), [ids.b, ids.a]);
  t.same(idsOf(await list('?search=billing%40far')), [ids.a], 'sender address');
  t.same(idsOf(await list('?search=ann%20example')), [ids.c, ids.b], 'sender name');
  t.same(idsOf(await list('?search=sales%40lists')), [ids.c], 'recipient');
  t.same(idsOf(await list('?search=body%20of')), [], 'not the body');
  for (const bad of ['', '%20%20', 'x'.repeat(201)]) {
    const r = await rig.api(team.token, 'GET', `/emails/receiving?search=${bad}`);
    t.equal(r.status, 422, `search "${bad.slice(0, 10)}" is refused`);
  }
});

t.test('start_date and end_date are inclusive on received time', async (t) => {
  t.same(idsOf(await list('?start_date=2026-11-20T11:00:00Z&end_date=2026-11-20T12:00:00Z')), [ids.c, ids.b]);
  t.same(idsOf(await list('?start_date=2026-11-20T12:00:00.001Z')), [ids.d]);
  t.same(idsOf(await list('?end_date=2026-11-20T10:00:00Z')), [ids.a]);
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${ids.b}`);
  t.equal(got.body.created_at, '2026-11-20T11:00:00.000Z', 'created_at is when svc received it');
  const bad = await rig.api(team.token, 'GET', '/emails/receiving?start_date=yesterday');
  t.equal(bad.status, 422);
  const reversed = await rig.api(team.token, 'GET', '/emails/receiving?start_date=2026-11-21T00:00:00Z&end_date=2026-11-20T00:00:00Z');
  t.equal(reversed.status, 422);
});

t.test('dropped mail is recorded with the spec reason, no bodies and no attachments', async (t) => {
  const withPart = rfc822({ From: 'x@far.example', Subject: 'dropme', 'Content-Type': 'multipart/mixed; boundary=q' },
    '--q\nContent-Type: text/plain\n\nhello\n--q\nContent-Type: application/pdf\nContent-Disposition: attachment; filename=a.pdf\n\n%PDF-1\n--q--\n');
  const ingest = services.receiving.ingest;
  const routing = services.receiving.routing;
  const realLimits = ingest.limits;
  const realMailboxes = routing.mailboxes;
  t.teardown(() => { ingest.limits = realLimits; routing.mailboxes = realMailboxes; });
  const expectDropped = async (reason: string, raw: string, keepsRaw: boolean, whileSending?: { before(): Promise<void>; after(): Promise<void> }) => {
    await whileSending?.before();
    const sent = await rig.send({ from: 'env@far.example', to: ['desk@lists-inbox.net'] }, raw);
    await whileSending?.after();
    t.match(sent.response, /^250 /, `${reason}: still 250 (accepted, not stored)`);
    const got = await rig.api(team.token, 'GET', `/emails/receiving/${sent.id}`);
    t.equal(got.body.dropped_reason, reason);
    t.equal(got.body.html, null);
    t.equal(got.body.text, null);
    t.same(got.body.attachments, []);
    t.equal(got.body.raw !== null, keepsRaw, `${reason}: raw ${keepsRaw ? 'kept' : 'not kept'}`);
    const events = await rig.events('email.received');
    t.notOk(events.some((e) => e.data.email_id === sent.id), `${reason}: no email.received event`);
    return got.body;
  };

  ingest.limits = fixedLimits(1, 0);
  clock.set(new Date('2026-11-21T00:00:00Z'));
  const firstOfDay = await rig.send({ from: 'env@far.example', to: ['desk@lists-inbox.net'] }, withPart);
  t.notOk((await rig.api(team.token, 'GET', `/emails/receiving/${firstOfDay.id}`)).body.dropped_reason, 'under the cap: kept');
  await expectDropped('daily_cap', withPart, false);
  clock.set(new Date('2026-11-22T00:00:00Z'));
  const nextDay = await rig.send({ from: 'env@far.example', to: ['desk@lists-inbox.net'] }, withPart);
  t.notOk((await rig.api(team.token, 'GET', `/emails/receiving/${nextDay.id}`)).body.dropped_reason, 'a new UTC day: kept again');

  ingest.limits = fixedLimits(0, 1024);
  await expectDropped('storage_quota', withPart, false);
  ingest.limits = realLimits;

  routing.mailboxes = { claims: async () => false };
  const noMailbox = await expectDropped('no_mailbox', withPart, false);
  t.same(noMailbox.received_for, ['desk@lists-inbox.net']);
  routing.mailboxes = realMailboxes;

  const unreadable = await expectDropped('parse_failed', 'this is not a message, it has no header section\r\nat all\r\n', true);
  const raw = await fetch(unreadable.raw.download_url);
  t.equal(raw.status, 200, 'parse_failed: the raw source is still downloadable');
  t.match(await raw.text(), /this is not a message/);

  // The team's own key is refused while it is suspended, so the record is read after.
  await expectDropped('team_blocked', withPart, false, {
    before: () => services.api.foundation.teams.setStatus(team.teamId, 'suspended'),
    after: () => services.api.foundation.teams.setStatus(team.teamId, 'active'),
  });
});

t.test('signed links expire after 15 minutes; html_format=data_uri inlines cid: images', async (t) => {
  clock.set(new Date('2026-11-23T08:00:00Z'));
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const sent = await rig.send({ from: 'env@far.example', to: ['desk@lists-inbox.net'] }, rfc822({
    From: 'x@far.example', Subject: 'inline image', 'Content-Type': 'multipart/related; boundary=r',
  }, ['--r', 'Content-Type: text/html', '', '<img src="cid:logo@far">', '--r', 'Content-Type: image/png', 'Content-ID: <logo@far>',
    'Content-Disposition: inline; filename=logo.png', 'Content-Transfer-Encoding: base64', '', png.toString('base64'), '--r--', ''].join('\n')));
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${sent.id}`);
  t.equal(got.body.html, '<img src="cid:logo@far">', 'stored and shown as decoded by default');
  t.match(got.body.attachments, [{ filename: 'logo.png', content_type: 'image/png', content_id: 'logo@far', content_disposition: 'inline' }]);
  const inlined = await rig.api(team.token, 'GET', `/emails/receiving/${sent.id}?html_format=data_uri`);
  t.equal(inlined.body.html, `<img src="data:image/png;base64,${png.toString('base64')}">`);
  t.equal((await rig.api(team.token, 'GET', `/emails/receiving/${sent.id}?html_format=svg`)).status, 422);

  const parts = await rig.api(team.token, 'GET', `/emails/receiving/${sent.id}/attachments`);
  const link = parts.body.data[0].download_url as string;
  t.equal(parts.body.data[0].expires_at, '2026-11-23T08:15:00.000Z');
  clock.set(new Date('2026-11-23T08:14:59.999Z'));
  const before = await fetch(link);
  t.equal(before.status, 200, 'valid until its expiry');
  t.equal(before.headers.get('content-type'), 'image/png');
  t.same(Buffer.from(await before.arrayBuffer()), png);
  clock.set(new Date('2026-11-23T08:15:00.000Z'));
  const after = await fetch(link);
  t.equal(after.status, 404, 'expired at expires_at');
  t.equal(((await after.json()) as { name: string }).name, 'not_found');
  t.equal((await fetch(got.body.raw.download_url)).status, 404, 'the raw link expires too');
});

t.test('the resend SDK lists and reads received mail and its attachments', async (t) => {
  const resend = new Resend(team.token, { baseUrl: rig.app.baseUrl });
  const listed = await resend.emails.receiving.list({ limit: 2 });
  t.equal(listed.error, null);
  t.equal(listed.data!.data.length, 2);
  t.equal(listed.data!.has_more, true);
  const got = await resend.emails.receiving.get(ids.c);
  t.equal(got.error, null);
  t.match(got.data, { object: 'email', id: ids.c, subject: 'order_42 shipped', received_for: ['sales@lists-inbox.net'] });
  const parts = await resend.emails.receiving.attachments.list({ emailId: ids.c });
  t.equal(parts.error, null);
  t.same(parts.data!.data, []);
  const missing = await resend.emails.receiving.get(crypto.randomUUID());
  t.match(missing.error, { name: 'not_found', statusCode: 404 });
});
