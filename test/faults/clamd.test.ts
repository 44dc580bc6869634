import t, { type Test } from 'tap';
import { mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EICAR, startTestClamd, type TestClamd } from '../helpers/clamd.js';
import { waitFor, withDeadline } from '../helpers/deadline.js';
import { call } from '../helpers/http.js';
import { rfc822, startInboundRig, type InboundRig } from '../helpers/inbound-rig.js';

// clamd down or hung, under load (test/inbound/scanning.test.ts covers verdicts, a frozen clamd
// and a missing socket one message at a time). svc is configured with a socket path that is a
// symlink the test points at a real clamd, at nothing (the clamd was killed -9), at a fake clamd
// that accepts and never answers, and at a fresh clamd — svc itself is never restarted.
// Fail-closed (the default) answers 451 within the deadline and stores nothing it did not scan;
// fail-open stores it marked unscanned. Neither ever stores an unscanned message as clean: half
// the load carries the EICAR test virus, so a message that skipped the scan but were marked clean
// would show.
const DEADLINE_MS = 1500;
/** The deadline plus time for a loaded 2-core machine (a bound on hangs, not a speed check). */
const BOUND_MS = DEADLINE_MS + 10_000;

const dir = mkdtempSync(join(tmpdir(), 'svc-clamd-fault-'));
const socketPath = join(dir, 'clamd.sock');
/** Points svc's clamd socket path somewhere else, atomically. */
const pointAt = (target: string) => {
  const next = join(dir, `next-${Date.now()}-${Math.random()}`);
  symlinkSync(target, next);
  renameSync(next, socketPath);
};

// A clamd that accepts every connection and never says a word.
const hungPath = join(dir, 'hung.sock');
const hungSockets = new Set<Socket>();
let hungConnections = 0;
const hung = createServer((s) => { hungConnections++; hungSockets.add(s); s.on('close', () => hungSockets.delete(s)); s.on('error', () => undefined); s.resume(); });
await new Promise<void>((resolve) => hung.listen(hungPath, resolve));

let clamd: TestClamd = await startTestClamd();
pointAt(clamd.socket);
const spares: TestClamd[] = [];
t.teardown(async () => {
  for (const s of hungSockets) s.destroy();
  hung.close();
  await clamd.stop();
  for (const c of spares) await c.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Rig { mode: 'closed' | 'open'; rig: InboundRig; token: string; db: InboundRig['app']['appliance']['services']['database']['sqlite'] }
async function rigFor(mode: 'closed' | 'open'): Promise<Rig> {
  const rig = await startInboundRig({
    env: { SVC_SCANNER_CLAMD: socketPath, SVC_SCANNER_TIMEOUT_MS: String(DEADLINE_MS), ...(mode === 'open' ? { SVC_SCANNER_FAIL_MODE: 'open' } : {}) },
  });
  const team = await rig.app.newTeam(`Scan ${mode}`);
  rig.addDomain(team.teamId, 'fault-inbox.net');
  return { mode, rig, token: team.token, db: rig.app.appliance.services.database.sqlite };
}
const closed = await rigFor('closed');
const open = await rigFor('open');
t.teardown(async () => { await closed.rig.stop(); await open.rig.stop(); });

const message = (subject: string, virus: boolean) => rfc822({
  From: 'Mallory <m@far.example>', To: 'desk@fault-inbox.net', Subject: subject, 'MIME-Version': '1.0',
  'Content-Type': 'multipart/mixed; boundary=z',
}, ['--z', 'Content-Type: text/plain', '', 'see attached', '--z', 'Content-Type: application/octet-stream; name=a.bin',
  'Content-Disposition: attachment; filename=a.bin', 'Content-Transfer-Encoding: base64', '',
  Buffer.from(virus ? EICAR : `harmless ${subject}`).toString('base64'), '--z--', ''].join('\n'));

interface Sent { subject: string; virus: boolean; at: number; ms: number; code: number; error?: string }
/** One message; its SMTP answer (250, 451, …; 0 when none came) and how long it took. */
async function offer(r: Rig, subject: string, virus: boolean): Promise<Sent> {
  const at = performance.now();
  const code = await withDeadline(`the SMTP answer to ${subject}`, r.rig.send({ from: 'm@far.example', to: ['desk@fault-inbox.net'] }, message(subject, virus)), BOUND_MS + 5000)
    .then(() => 250, (err: { responseCode?: number; message: string }) => err.responseCode ?? 0);
  return { subject, virus, at, ms: Math.round(performance.now() - at), code };
}

/** What svc stored for each subject: scan status and dropped reason. */
const stored = (r: Rig) => new Map((r.db.prepare('select subject, scan_status, dropped_reason from received_emails').all() as { subject: string; scan_status: string; dropped_reason: string | null }[])
  .map((row) => [row.subject, row]));

/** Every stored message is what its scan (or its absence) allows; every refused one is absent. */
function checkStored(t: Test, r: Rig, sent: Sent[]): void {
  const rows = stored(r);
  const wrong: string[] = [];
  for (const s of sent) {
    const row = rows.get(s.subject);
    if (s.code !== 250) { if (row) wrong.push(`${s.subject}: answered ${s.code} but stored`); continue; }
    if (!row) { wrong.push(`${s.subject}: answered 250 but not stored`); continue; }
    if (s.virus && row.scan_status === 'clean') wrong.push(`${s.subject}: the virus was stored as clean`);
    if (r.mode === 'closed' && row.scan_status === 'unscanned') wrong.push(`${s.subject}: stored unscanned while failing closed`);
    if (row.scan_status === 'infected' && row.dropped_reason !== 'virus') wrong.push(`${s.subject}: infected but kept`);
    if (s.virus && row.scan_status !== 'infected' && row.scan_status !== 'unscanned') wrong.push(`${s.subject}: virus marked ${row.scan_status}`);
  }
  t.same(wrong, [], `${r.mode}: ${sent.length} messages, every one stored as its scan allows`);
}

t.test('clamd killed -9 mid-load, then a new clamd: bounded answers, nothing unscanned kept as clean, scanning resumes', async (t) => {
  const sent: Record<'closed' | 'open', Sent[]> = { closed: [], open: [] };
  let running = true;
  let n = 0;
  const worker = async (r: Rig) => {
    while (running) {
      const i = n++;
      sent[r.mode].push(await offer(r, `load ${r.mode} ${i}`, i % 2 === 1));
      await sleep(20);
    }
  };
  const workers = [closed, closed, open, open].map(worker);
  await sleep(1500);
  const killedAt = performance.now();
  process.kill(clamd.pid, 'SIGKILL');
  spares.push(clamd);
  const ready = await waitFor('/ready to name clamd', async () => {
    const r = await call(closed.rig.app.baseUrl, 'GET', '/ready');
    return r.status === 503 ? r.body : undefined;
  }, BOUND_MS);
  await sleep(2500);
  clamd = await startTestClamd();
  pointAt(clamd.socket);
  const backAt = performance.now();
  await sleep(2500);
  running = false;
  await Promise.all(workers);

  for (const r of [closed, open]) {
    const all = sent[r.mode];
    const during = all.filter((s) => s.at > killedAt + 200 && s.at + s.ms < backAt);
    const after = all.filter((s) => s.at > backAt + 200);
    const counts = (list: Sent[]) => [...new Set(list.map((s) => s.code))].map((c) => `${c}×${list.filter((s) => s.code === c).length}`).join(' ');
    t.comment(`${r.mode}: ${all.length} offered; while clamd was dead ${counts(during)}; after it returned ${counts(after)}; slowest ${Math.max(...all.map((s) => s.ms))} ms`);
    t.ok(all.every((s) => s.ms <= BOUND_MS), `${r.mode}: every message answered within ${BOUND_MS} ms`);
    t.ok(all.every((s) => s.code === 250 || s.code === 451), `${r.mode}: only 250 or 451`);
    t.ok(during.length > 0, `${r.mode}: load ran while clamd was dead`);
    if (r.mode === 'closed') t.ok(during.every((s) => s.code === 451), 'closed: 451 while clamd was dead');
    else t.ok(during.every((s) => s.code === 250), 'open: 250 while clamd was dead');
    t.ok(after.length > 0 && after.every((s) => s.code === 250), `${r.mode}: accepted again once clamd returned`);
    checkStored(t, r, all);
    const rows = stored(r);
    const deadRows = during.map((s) => rows.get(s.subject)).filter(Boolean);
    if (r.mode === 'open') t.ok(deadRows.length > 0 && deadRows.every((row) => row!.scan_status === 'unscanned'), 'open: kept marked unscanned while clamd was dead');
    const afterRows = after.map((s) => ({ s, row: rows.get(s.subject)! }));
    t.ok(afterRows.every(({ s, row }) => row.scan_status === (s.virus ? 'infected' : 'clean')), `${r.mode}: scanned again after clamd returned, without a restart`);
  }
  t.match(ready, { failed: ['clamd'] }, '/ready named clamd while it was dead');
  await waitFor('/ready ok again', async () => (await call(closed.rig.app.baseUrl, 'GET', '/ready')).status === 200, BOUND_MS);
});

t.test('a hung clamd (accepts, never answers): 451 within the deadline, or unscanned when failing open; then scanning resumes', async (t) => {
  pointAt(hungPath);
  const sent: Record<'closed' | 'open', Sent[]> = { closed: [], open: [] };
  await Promise.all([closed, open].map(async (r) => {
    for (const [i, virus] of [false, true, false, true].entries()) sent[r.mode].push(await offer(r, `hung ${r.mode} ${i}`, virus));
  }));
  t.ok(hungConnections >= 8, `the fake clamd took the scans' connections (${hungConnections})`);
  for (const r of [closed, open]) {
    const all = sent[r.mode];
    t.comment(`${r.mode}: ${all.map((s) => `${s.code} in ${s.ms} ms`).join(', ')}`);
    t.ok(all.every((s) => s.ms <= BOUND_MS), `${r.mode}: each answered within the ${DEADLINE_MS} ms deadline (+ slack)`);
    t.ok(all.every((s) => s.code === (r.mode === 'closed' ? 451 : 250)), `${r.mode}: ${r.mode === 'closed' ? '451' : '250'} for every message`);
    checkStored(t, r, all);
    if (r.mode === 'open') {
      const rows = stored(r);
      t.ok(all.every((s) => rows.get(s.subject)?.scan_status === 'unscanned'), 'open: every one marked unscanned, the virus too');
    }
  }
  pointAt(clamd.socket);
  for (const r of [closed, open]) {
    const back = [await offer(r, `back ${r.mode} clean`, false), await offer(r, `back ${r.mode} virus`, true)];
    t.same(back.map((s) => s.code), [250, 250], `${r.mode}: accepted once clamd answers`);
    const rows = stored(r);
    t.equal(rows.get(`back ${r.mode} clean`)?.scan_status, 'clean', `${r.mode}: scanned clean`);
    t.match(rows.get(`back ${r.mode} virus`), { scan_status: 'infected', dropped_reason: 'virus' }, `${r.mode}: the virus is caught again`);
  }
});
