import t from 'tap';
import { fixedWindow } from '../../core/retention-windows.js';
import { pruneDroppedReceived } from '../../core/retention/dropped.js';
import type { Logger } from '../../core/logger.js';
import { pruneDroppedReceivedJob } from '../../jobs/retention.js';
import { startScheduler } from '../../jobs/scheduler.js';
import { receivedRawKey } from '../../storage/files/index.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';
import { testClock } from '../helpers/test-clock.js';

// Dropped received records age out on the retention window, with the raw source a parse_failed
// drop keeps; kept messages never do, whatever their age, and the mailbox usage stays exact.

const DAY = 86_400_000;
const clock = testClock(new Date('2026-06-01T08:00:00Z'));
const rig = await startInboundRig({ clock });
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Retained');
rig.addDomain(team.teamId, 'retained-inbox.net');
const services = rig.app.appliance.services;
const { spool, routing } = services.receiving;
const retention = { db: services.database.db, spool, clock };
const sqlite = services.database.sqlite;

const withPart = rfc822({ From: 'x@far.example', Subject: 'with a part', 'Content-Type': 'multipart/mixed; boundary=q' },
  '--q\nContent-Type: text/plain\n\nhello\n--q\nContent-Type: application/pdf\nContent-Disposition: attachment; filename=a.pdf\n\n%PDF-1\n--q--\n');
const unreadable = 'this is not a message, it has no header section\r\nat all\r\n';
const send = async (raw: string) => (await rig.send({ from: 'env@far.example', to: ['desk@retained-inbox.net'] }, raw)).id;
async function sendNoMailbox(raw: string): Promise<string> {
  const real = routing.mailboxes;
  routing.mailboxes = { claims: async () => false };
  try {
    return await send(raw);
  } finally {
    routing.mailboxes = real;
  }
}
const status = async (id: string) => (await rig.api(team.token, 'GET', `/emails/receiving/${id}`)).status;
const usage = () => sqlite.prepare('select kept_bytes, kept_count from received_usage where team_id = ?').get(team.teamId) as { kept_bytes: number; kept_count: number };
const keptTotals = () => sqlite.prepare('select coalesce(sum(raw_size), 0) as kept_bytes, count(*) as kept_count from received_emails where team_id = ? and dropped_reason is null').get(team.teamId);
const attachmentRows = (id: string) => (sqlite.prepare('select count(*) as n from received_attachments where email_id = ?').get(id) as { n: number }).n;

function recordingLogger(): Logger & { lines: { obj: Record<string, unknown>; msg?: string }[] } {
  const lines: { obj: Record<string, unknown>; msg?: string }[] = [];
  const at = (obj: object, msg?: string) => { lines.push({ obj: obj as Record<string, unknown>, msg }); };
  const logger = { lines, info: at, warn: at, error: at, debug: at, child: () => logger };
  return logger;
}

t.test('old drops go with their raw source; kept mail of any age and young drops stay', async (t) => {
  const oldKept = await send(withPart);
  const oldParseFailed = await send(unreadable);
  const oldNoMailbox = await sendNoMailbox(withPart);
  t.equal(attachmentRows(oldKept), 1, 'the kept message has its attachment row');
  t.ok(await spool.exists(receivedRawKey(oldParseFailed)), 'a parse_failed drop keeps its raw source');
  t.notOk(await spool.exists(receivedRawKey(oldNoMailbox)), 'a no_mailbox drop keeps none');
  clock.advance(20 * DAY);
  const youngParseFailed = await send(unreadable);
  const youngNoMailbox = await sendNoMailbox(withPart);
  const youngKept = await send(withPart);
  const usageBefore = usage();
  t.same(usageBefore, keptTotals(), 'usage counts the kept messages only');
  t.equal(usageBefore.kept_count, 2);

  clock.advance(9 * DAY);
  t.same(await pruneDroppedReceived(retention, fixedWindow(30)), { records: 0, raw_files: 0 }, 'nothing is 30 days old yet');

  clock.advance(2 * DAY); // the first three are 31 days old, the rest 11
  t.same(await pruneDroppedReceived(retention, fixedWindow(30)), { records: 2, raw_files: 1 }, 'the two old drops and one raw file');
  t.equal(await status(oldParseFailed), 404, 'an aged-out drop answers 404');
  t.equal(await status(oldNoMailbox), 404);
  t.notOk(await spool.exists(receivedRawKey(oldParseFailed)), 'its raw source is gone from the spool');
  for (const id of [oldKept, youngKept, youngParseFailed, youngNoMailbox]) t.equal(await status(id), 200, 'kept messages and young drops stay');
  t.ok(await spool.exists(receivedRawKey(oldKept)), 'the old kept message keeps its raw source');
  t.ok(await spool.exists(receivedRawKey(youngParseFailed)), 'a young parse_failed drop keeps its raw source');
  t.equal(attachmentRows(oldKept), 1, 'and its attachment row');
  t.same(usage(), usageBefore, 'usage is untouched: drops never counted');

  clock.advance(400 * DAY);
  t.same(await pruneDroppedReceived(retention, fixedWindow(30)), { records: 2, raw_files: 1 }, 'a year later the young drops went too');
  for (const id of [oldKept, youngKept]) t.equal(await status(id), 200, 'a kept message has no retention window');
  t.same(usage(), keptTotals(), 'usage still matches the kept messages');
  const raw = await rig.api(team.token, 'GET', `/emails/receiving/${oldKept}`);
  t.equal((await fetch(raw.body.raw.download_url)).status, 200, 'a 431-day-old kept message still downloads');
});

t.test('batches: more drops than one batch, all go; the job logs one line with its counts', async (t) => {
  const insert = sqlite.prepare(`insert into received_emails (id, team_id, domain_id, created_at, subject, from_text, from_address, from_name,
    to_json, received_for_json, search_text, dropped_reason, raw_key, raw_size, envelope_from, client_ip, client_helo, scan_status)
    values (?, ?, null, ?, '', '', '', '', '[]', '[]', '', 'daily_cap', null, 10, '', '127.0.0.1', 'h', 'clean')`);
  const old = new Date(clock.now().getTime() - 40 * DAY).toISOString();
  for (let i = 0; i < 1203; i++) insert.run(crypto.randomUUID(), team.teamId, old);
  const keptBefore = keptTotals();
  const logger = recordingLogger();
  const scheduler = startScheduler([pruneDroppedReceivedJob(retention, async (days) => fixedWindow(days), 30)], services.redis, logger);
  t.teardown(() => scheduler.stop());
  t.equal(await scheduler.runNow('prune-dropped-received'), true);
  t.match(logger.lines, [{ obj: { job: 'prune-dropped-received', result: { records: 1203, raw_files: 0 } }, msg: 'job finished' }]);
  t.equal((sqlite.prepare('select count(*) as n from received_emails where dropped_reason is not null').get() as { n: number }).n, 0);
  t.same(keptTotals(), keptBefore, 'no kept message was touched');
  const plan = sqlite.prepare("explain query plan select id from received_emails where dropped_reason is not null and created_at < '2100' order by created_at limit 500").all() as { detail: string }[];
  t.match(plan.map((p) => p.detail).join('\n'), /received_emails_dropped_created/, 'old drops are found through the partial index, not by walking kept mail');
});
