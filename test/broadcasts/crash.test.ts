import t from 'tap';
import { sql } from 'kysely';
import { startTestAppliance } from '../helpers/appliance.js';
import { campaignTeam, seedContacts, spawnJobsProcess } from '../helpers/broadcasts.js';
import { exited, spawnOutboundProcess } from '../helpers/crash-rig.js';
import { exitWithin, waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { call } from '../helpers/http.js';

// A 20,000-recipient broadcast fanned out by a real `svc start --role jobs` child that is killed
// with SIGKILL five times mid-run, while a real `svc start --role outbound` child delivers what
// each committed page queued to a fake MX on loopback: in the end every member has exactly one
// recipient row, every sent row exactly one email (one recipient each, its own address), the
// allowance counted each email once, and the MX took exactly one message for each sent member and
// none for anyone else — nobody skipped, nobody doubled, counted at the far end.
const members = 20_000;
const dns = await mailZone();
const mx = await startFakeMx({ keepRaw: false });
const publicBase = 'https://news.crash-test.example';
const app = await startTestAppliance({
  env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_PUBLIC_BASE_URL: publicBase },
});
t.teardown(async () => { await app.stop(); await mx.stop(); await dns.stop(); });
const db = app.appliance.services.database.db;
// Fan-out and delivery of 20,000 messages (DKIM-signed by the child, taken by the MX in this
// process) overlap; the file's bound is above tap's default to leave room for a loaded machine.
t.setTimeout(300_000);

t.test('kill -9 five times during the fan-out: every recipient exactly once', async (t) => {
  const team = await campaignTeam(app, dns, 'Crash news', 'crash-news.net');
  await seedContacts(app, team.teamId, members);
  // A few who must be excluded, with their reason, across the whole walk.
  await db.updateTable('contacts').set({ subscription_status: 'unsubscribed' }).where('team_id', '=', team.teamId).where('email', 'like', 'r%777@%').execute();
  const unsubscribed = Number((await db.selectFrom('contacts').select(sql<number>`count(*)`.as('n')).where('team_id', '=', team.teamId).where('subscription_status', '=', 'unsubscribed').executeTakeFirstOrThrow()).n);
  const created = await call(app.baseUrl, 'POST', '/broadcasts', {
    token: team.token,
    body: { name: 'Big', segment_id: team.segmentId, from: 'News <news@crash-news.net>', subject: 'Hi {{{FIRST_NAME}}}', preview_text: 'p', text: 'Hello {{{FIRST_NAME}}} {{{UNSUBSCRIBE_URL}}}', send: true },
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const done = async () => Number((await db.selectFrom('broadcast_recipients').select(sql<number>`count(*)`.as('n')).where('broadcast_id', '=', id).executeTakeFirstOrThrow()).n);
  const settings = {
    SVC_DATA_DIR: app.config.data_dir, SVC_REDIS_URL: app.redis.url, SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0',
    SVC_PUBLIC_BASE_URL: publicBase, SVC_LOG_LEVEL: 'error', SVC_WORK_POLL_MS: '50', SVC_WORK_LEASE_MS: '2000', SVC_BROADCASTS_PAGE_SIZE: '200',
  };
  // Delivers from the first committed page on, woken over Redis like a production outbound node.
  const outbound = spawnOutboundProcess({
    SVC_DATA_DIR: app.config.data_dir, SVC_REDIS_URL: app.redis.url, SVC_DNS_SERVERS: dns.address, SVC_OUTBOUND_PORT: String(mx.port),
    SVC_OUTBOUND_POLL_S: '1', SVC_LOG_LEVEL: 'error', SVC_REGIONS: JSON.stringify({ 'us-east-1': { concurrency: 20, per_domain_connections: 20 } }),
  });
  t.teardown(async () => { outbound.kill('SIGKILL'); await exited(outbound); });
  const started = Date.now();
  for (let kill = 1; kill <= 5; kill += 1) {
    const child = spawnJobsProcess(settings);
    // Each kill falls at a set share of the members, whatever the machine's speed: mid-run every time.
    const target = Math.floor((members * kill) / 7) + Math.floor(Math.random() * 150);
    try {
      await waitFor(`the fan-out to pass ${target} members`, async () => (await done()) >= target, 120_000, 5);
    } finally {
      // Killed on a failed wait too: a child left running would outlive the suite.
      // The exit's deadline starts at the kill, not at the spawn: the walk to the target may be long.
      child.kill('SIGKILL');
      await exitWithin('the killed jobs child to exit', child);
    }
    const reached = await done();
    t.ok(reached >= target && reached < members, `kill ${kill} landed mid-run (${reached} of ${members} members done)`);
  }
  t.ok((await done()) < members, 'members remained after the fifth kill');
  const last = spawnJobsProcess(settings);
  t.teardown(async () => { last.kill('SIGKILL'); });
  await waitFor('the broadcast to be sent', async () => (await call(app.baseUrl, 'GET', `/broadcasts/${id}`, { token: team.token })).body.status === 'sent', 180_000, 100);
  t.comment(`fan-out done in ${((Date.now() - started) / 1000).toFixed(1)} s; ${mx.received.length} messages at the MX by then`);

  const rows = await db.selectFrom('broadcast_recipients').select(['contact_id', 'status', 'reason', 'email_id', 'email']).where('broadcast_id', '=', id).execute();
  t.equal(rows.length, members, 'one row per member');
  t.equal(new Set(rows.map((r) => r.contact_id)).size, members, 'no member twice');
  const excluded = rows.filter((r) => r.status === 'excluded');
  t.equal(excluded.length, unsubscribed, 'the unsubscribed excluded');
  t.ok(excluded.every((r) => r.reason === 'unsubscribed'), 'with their reason');
  const sent = rows.filter((r) => r.status === 'sent');
  const emails = await db.selectFrom('emails').select(['id', 'recipients_text', 'recipient_count']).where('broadcast_id', '=', id).execute();
  t.equal(emails.length, sent.length, 'one email per sent member, none more');
  const byId = new Map(emails.map((e) => [e.id, e]));
  t.ok(sent.every((r) => byId.get(r.email_id!)?.recipients_text === r.email && byId.get(r.email_id!)?.recipient_count === 1), 'each email to its own member only');
  t.equal(new Set(emails.map((e) => e.recipients_text)).size, sent.length, 'no address in two emails');
  const spent = await db.selectFrom('team_usage').selectAll().where('team_id', '=', team.teamId).execute();
  t.same(spent.map((u) => [u.period.slice(0, 1), u.emails]).sort(), [['d', sent.length], ['m', sent.length]], 'the allowance counted each send once, day and month');
  const work = await db.selectFrom('work_items').select(['state', 'steps']).where('key', '=', id).executeTakeFirstOrThrow();
  t.equal(work.state, 'done');

  // At the far end: the outbound child drains the queue; the MX must then hold one message per
  // sent member, under that member's address and its email's Message-ID, and nothing else.
  const pending = async () => Number((await db.selectFrom('email_recipients').innerJoin('emails', 'emails.id', 'email_recipients.email_id')
    .select(sql<number>`count(*)`.as('n')).where('emails.broadcast_id', '=', id).where('email_recipients.state', 'in', ['queued', 'submitting']).executeTakeFirstOrThrow()).n);
  await waitFor(`the MX to take ${sent.length} messages and the queue to drain`, async () => mx.received.length >= sent.length && (await pending()) === 0, 240_000, 200);
  t.comment(`delivered at the MX ${((Date.now() - started) / 1000).toFixed(1)} s after the send`);
  const byAddress = new Map<string, number>();
  for (const m of mx.received) byAddress.set(m.rcptTo.toLowerCase(), (byAddress.get(m.rcptTo.toLowerCase()) ?? 0) + 1);
  const sentAddresses = new Set(sent.map((r) => r.email));
  t.equal(mx.received.length, sent.length, 'the MX took as many messages as members were sent');
  t.ok(sent.every((r) => byAddress.get(r.email) === 1), 'every sent member received exactly one message');
  t.same([...byAddress.keys()].filter((a) => !sentAddresses.has(a)), [], 'no one else received anything');
  const messageIds = new Set((await db.selectFrom('emails').select('message_id').where('broadcast_id', '=', id).execute()).map((e) => e.message_id));
  const atMx = mx.accepted();
  t.equal(atMx.size, sent.length, 'one distinct Message-ID per sent member at the MX');
  t.ok([...atMx].every(([mid, n]) => n === 1 && messageIds.has(mid)), 'each of the broadcast\'s emails taken once, none twice');
  const delivered = Number((await db.selectFrom('email_recipients').innerJoin('emails', 'emails.id', 'email_recipients.email_id')
    .select(sql<number>`count(*)`.as('n')).where('emails.broadcast_id', '=', id).where('email_recipients.state', '=', 'delivered').executeTakeFirstOrThrow()).n);
  t.equal(delivered, sent.length, 'and recorded delivered in svc');
  outbound.kill('SIGTERM');
  await exited(outbound);
});
