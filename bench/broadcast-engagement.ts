// A broadcast's engagement lists on a 100,000-recipient broadcast: GET /broadcasts/{id}/clicked-links
// and GET /broadcasts/{id}/recipients?type=opened|clicked|complained|unsubscribed, timed over HTTP
// beside two references measured in the same run: `type=sent` (the list that existed before,
// the fan-out's own rows) and the clicked links summed at read time from the per-recipient link
// rows (what a list without the per-link table would have to do).
//
// Inside this process: a real appliance (api role, temp data folder, SQLite with the shipped
// synchronous=FULL, private redis-server). Its team gets one sent broadcast written as rows, in
// the shapes the fan-out and tracking write: BENCH_RECIPIENTS contacts, emails, email recipients
// and broadcast recipients; 35% opened (a fifth of those by a machine only), 6% clicked (one to
// three of BENCH_LINKS links, a few by a scanner too), 0.05% complained, 0.3% unsubscribed through
// the broadcast. Each list's first page (20) and a page deep in the list run BENCH_RUNS times.
// It prints the figures, stops the appliance, removes its folder and exits.
//
// Settings (environment): BENCH_RECIPIENTS (100000), BENCH_LINKS (6), BENCH_RUNS (20).
import { cpus, loadavg } from 'node:os';
import { sql } from 'kysely';
import { newId } from '../core/ids.js';
import { linkKeyOf } from '../storage/repos/index.js';
import { inTransaction, type Db } from '../storage/sql/index.js';
import { startTestAppliance } from '../test/helpers/appliance.js';
import { call } from '../test/helpers/http.js';
import { intFromEnv, seededRandom } from './settings.js';

const RECIPIENTS = intFromEnv('BENCH_RECIPIENTS', 100_000);
const LINKS = intFromEnv('BENCH_LINKS', 6);
const RUNS = intFromEnv('BENCH_RUNS', 20);
const CHUNK = 2000;

type Row = Record<string, unknown>;

/** Multi-row inserts of at most CHUNK rows (fewer for wide rows: SQLite's bound-parameter cap). */
async function insertAll(db: Db, table: string, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const per = Math.max(1, Math.min(CHUNK, Math.floor(30_000 / Object.keys(rows[0]!).length)));
  for (let i = 0; i < rows.length; i += per) await db.insertInto(table as any).values(rows.slice(i, i + per) as any).execute();
}

interface Seeded { broadcastId: string; deepContact: string }

interface LinkSum { url: string; key: string; id: string; clicks: number; machine: number; unique: number; uniqueHuman: number }
interface Batch { contacts: Row[]; emails: Row[]; recipients: Row[]; members: Row[]; linkClicks: Row[]; marks: Row[] }
interface Context { next: () => number; at: string; teamId: string; broadcastId: string; links: LinkSum[] }

/** One recipient's clicks: one to three links, a tenth of clickers with a scanner's click on each too. */
function clicksOf(c: Context, emailId: string, batch: Batch): { clicks: number; machineClicks: number } {
  const n = 1 + Math.floor(c.next() * 3);
  const scanned = c.next() < 0.1;
  const seen = new Set<string>();
  let clicks = 0;
  let machineClicks = 0;
  for (let k = 0; k < n; k++) {
    const link = c.links[Math.floor(c.next() * LINKS)]!;
    if (seen.has(link.key)) continue;
    seen.add(link.key);
    const human = 1 + Math.floor(c.next() * 2);
    const machine = scanned ? 1 : 0;
    batch.linkClicks.push({ broadcast_id: c.broadcastId, email_id: emailId, link_key: link.key, clicks: human + machine, machine_clicks: machine });
    link.clicks += human + machine; link.machine += machine; link.unique++; link.uniqueHuman++;
    clicks += human + machine; machineClicks += machine;
  }
  return { clicks, machineClicks };
}

/** Recipient `i`: its contact, email, email recipient with its engagement, broadcast row and marks. */
function addRecipient(c: Context, i: number, batch: Batch): string {
  const { at, teamId, broadcastId } = c;
  const contactId = newId();
  const emailId = newId();
  const address = `reader${i}@inbox-${i % 97}.example`;
  batch.contacts.push({ id: contactId, team_id: teamId, email: address, email_key: address, first_name: null, last_name: null, subscription_status: 'subscribed', origin: 'api', created_at: at, updated_at: at });
  batch.emails.push({
    id: emailId, team_id: teamId, api_key_id: null, domain_id: 'bench-domain', region: 'us-east-1', from_header: 'News <news@bench.example>', from_email: 'news@bench.example',
    to_json: JSON.stringify([{ address }]), cc_json: null, bcc_json: null, reply_to_json: null, subject: 'Spring', html: null, text: 'x', headers_json: null,
    tags_json: null, topic_id: null, template_id: null, template_version: null, message_id: `<${emailId}@bench.example>`, scheduled_at: null, status: 'dispatched',
    last_event: 'delivered', recipients_text: address, recipient_count: 1, content_hash: 'h', has_unsubscribe: 1, attachment_count: 0, created_at: at, updated_at: at,
    broadcast_id: broadcastId,
  });
  const opened = c.next() < 0.35;
  const machineOnly = opened && c.next() < 0.2;
  const { clicks, machineClicks } = opened && !machineOnly && c.next() < 0.17 ? clicksOf(c, emailId, batch) : { clicks: 0, machineClicks: 0 };
  const recipient: Row = {
    id: `${emailId}.0`, email_id: emailId, team_id: teamId, region: 'us-east-1', idx: 0, address, domain: `inbox-${i % 97}.example`, kind: 'to',
    state: 'delivered', attempts: 1, next_attempt_at: null, first_attempt_at: at, submitted_at: at, expires_at: null, last_response: '250 ok',
    bounce_type: null, bounce_sub_type: null, updated_at: at,
    opens: opened ? 1 + Math.floor(c.next() * 3) : 0, machine_opens: machineOnly ? 1 : 0, clicks, machine_clicks: machineClicks,
    first_opened_at: opened ? at : null, first_human_opened_at: opened && !machineOnly ? at : null,
    first_clicked_at: clicks ? at : null, first_human_clicked_at: clicks ? at : null, complained_at: null,
  };
  batch.recipients.push(recipient);
  const mark = (kind: string) => batch.marks.push({ broadcast_id: broadcastId, kind, contact_id: contactId, team_id: teamId, created_at: at });
  if (c.next() < 0.0005) {
    recipient.complained_at = at;
    mark('complained');
  }
  batch.members.push({ broadcast_id: broadcastId, contact_id: contactId, team_id: teamId, email: address, status: 'sent', reason: null, email_id: emailId, created_at: at });
  if (c.next() < 0.003) mark('unsubscribed');
  return contactId;
}

async function seed(db: Db, teamId: string): Promise<Seeded> {
  const at = new Date().toISOString();
  const broadcastId = newId();
  const links = Array.from({ length: LINKS }, (_, i) => `https://shop.example/spring/${i}?utm_source=broadcast`)
    .map((url) => ({ url, key: linkKeyOf(url), id: newId(), clicks: 0, machine: 0, unique: 0, uniqueHuman: 0 }));
  const context: Context = { next: seededRandom(7), at, teamId, broadcastId, links };
  await db.insertInto('broadcasts').values({
    id: broadcastId, team_id: teamId, name: 'Spring', segment_id: null, topic_id: null, template_id: null, from_header: 'News <news@bench.example>',
    subject: 'Spring', reply_to_json: null, preview_text: null, html: '<p>x</p>', text: 'x', status: 'sent', scheduled_at: null, sent_at: at,
    recipients_sent: RECIPIENTS, recipients_excluded: 0, created_at: at, updated_at: at,
  }).execute();
  const contactIds: string[] = [];
  for (let start = 0; start < RECIPIENTS; start += CHUNK) {
    const batch: Batch = { contacts: [], emails: [], recipients: [], members: [], linkClicks: [], marks: [] };
    for (let i = start; i < Math.min(RECIPIENTS, start + CHUNK); i++) contactIds.push(addRecipient(context, i, batch));
    await inTransaction(db, async (trx) => {
      await insertAll(trx, 'contacts', batch.contacts);
      await insertAll(trx, 'emails', batch.emails);
      await insertAll(trx, 'email_recipients', batch.recipients);
      await insertAll(trx, 'broadcast_recipients', batch.members);
      await insertAll(trx, 'broadcast_link_clicks', batch.linkClicks);
      await insertAll(trx, 'broadcast_recipient_marks', batch.marks);
    });
  }
  await insertAll(db, 'broadcast_links', links.map((l) => ({
    broadcast_id: broadcastId, link_key: l.key, id: l.id, team_id: teamId, url: l.url,
    clicks: l.clicks, machine_clicks: l.machine, unique_clicks: l.unique, unique_human_clicks: l.uniqueHuman,
  })));
  // A contact half-way down the newest-first order: the cursor of a page deep in each list.
  return { broadcastId, deepContact: [...contactIds].sort().reverse()[Math.floor(RECIPIENTS / 2)]! };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function timed(label: string, run: () => Promise<unknown>): Promise<void> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`${label.padEnd(58)} p50 ${pct(times, 0.5).toFixed(1).padStart(7)} ms  p95 ${pct(times, 0.95).toFixed(1).padStart(7)} ms`);
}

async function main(): Promise<void> {
  console.log(`broadcast-engagement: ${RECIPIENTS} recipients, ${LINKS} links, ${RUNS} runs each; ${cpus().length} cpus, load ${loadavg()[0]!.toFixed(1)}`);
  const app = await startTestAppliance({ env: { SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
  try {
    const team = await app.newTeam('Bench');
    const db = app.appliance.services.database.db;
    const started = performance.now();
    const { broadcastId, deepContact } = await seed(db, team.teamId);
    console.log(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const get = (path: string) => async () => {
      const r = await call(app.baseUrl, 'GET', `/broadcasts/${broadcastId}${path}`, { token: team.token });
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    await timed('reference: recipients?type=sent, first page', get('/recipients?type=sent'));
    await timed('reference: recipients?type=sent, deep page', get(`/recipients?type=sent&after=${deepContact}`));
    await timed('reference: clicked links summed at read time (SQL only)', () => db.selectFrom('broadcast_link_clicks')
      .select(['link_key', sql<number>`sum(clicks)`.as('clicks'), sql<number>`count(*)`.as('unique_clicks')])
      .where('broadcast_id', '=', broadcastId).groupBy('link_key').execute());
    await timed('clicked-links (HTTP)', get('/clicked-links'));
    await timed('clicked-links?exclude_machine=true (HTTP)', get('/clicked-links?exclude_machine=true'));
    for (const type of ['opened', 'clicked', 'complained', 'unsubscribed']) {
      await timed(`recipients?type=${type}, first page`, get(`/recipients?type=${type}`));
      await timed(`recipients?type=${type}, deep page`, get(`/recipients?type=${type}&after=${deepContact}`));
    }
    await timed('recipients?type=clicked&exclude_machine=true, first page', get('/recipients?type=clicked&exclude_machine=true'));
  } finally {
    await app.stop();
  }
}

await main();
