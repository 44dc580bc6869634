import t from 'tap';
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { startTestAppliance } from '../helpers/appliance.js';
import { withDeadline } from '../helpers/deadline.js';
import { call } from '../helpers/http.js';
import { svcBin } from '../helpers/faults-svc.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';

// `svc admin backup PATH` on a live instance while sends, suppressions and inbound mail keep
// arriving; the backup is restored into a new appliance (database, spool, and the secret key
// the operator kept apart) and proved complete: everything committed before the backup started is
// there, row by row in every table, received sources byte for byte, sealed secrets still open.
const rig = await startInboundRig();
const app = rig.app;
const team = await app.newTeam('Backup');
fakeSendingDomains(app, rig.dns).add({ teamId: team.teamId, name: 'backup-sender.net' });
rig.addDomain(team.teamId, 'backup-inbox.net');
rig.dns.set('inbox-one.net', [{ type: 'MX', exchange: 'mx.inbox-one.net', priority: 10 }]);
rig.dns.set('mx.inbox-one.net', [{ type: 'A', value: '127.0.0.1' }]);
const backupRoot = mkdtempSync(join(tmpdir(), 'svc-backup-'));
const restoredDir = mkdtempSync(join(tmpdir(), 'svc-restored-'));
t.teardown(async () => { await rig.stop(); rmSync(backupRoot, { recursive: true, force: true }); rmSync(restoredDir, { recursive: true, force: true }); });
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });
const liveDb = app.appliance.services.database.sqlite;

// Enough data that the copy takes several steps, with writes landing between them.
const big = 'x'.repeat(100_000);
for (let b = 0; b < 2; b++) {
  const r = await api('POST', '/emails/batch', Array.from({ length: 100 }, (_, i) => ({ from: 'b@backup-sender.net', to: `big${b}-${i}@inbox-one.net`, subject: `Big ${b}-${i}`, text: big })));
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
}
const hook = (await api('POST', '/webhooks', { endpoint: 'http://93.184.215.14/hook', events: ['email.sent'] })).body;
await api('POST', '/emails', { from: 'b@backup-sender.net', to: 'att@inbox-one.net', subject: 'With a file', text: 'see file', attachments: [{ content: Buffer.from('file body').toString('base64'), filename: 'f.txt' }] });
await rig.send({ from: 'far@far.example', to: ['desk@backup-inbox.net'] }, rfc822({ From: 'far@far.example', Subject: 'Inbound file', 'Content-Type': 'multipart/mixed; boundary=q' },
  ['--q', 'Content-Type: text/plain', '', 'see file', '--q', 'Content-Type: application/pdf', 'Content-Disposition: attachment; filename=a.pdf', '', '%PDF-1 fake', '--q--', ''].join('\n')));

interface Acked { kind: 'suppression' | 'email' | 'received'; id: string; at: number }
const acked: Acked[] = [];
let running = true;
let n = 0;
async function writer(kind: Acked['kind']) {
  while (running) {
    const i = n++;
    try {
      if (kind === 'suppression') {
        const r = await api('POST', '/suppressions', { email: `s${i}@inbox-one.net` });
        if (r.status === 201) acked.push({ kind, id: r.body.id, at: Date.now() });
      } else if (kind === 'email') {
        const r = await api('POST', '/emails', { from: 'b@backup-sender.net', to: `e${i}@inbox-one.net`, subject: `Load ${i}`, text: `Message ${i}` });
        if (r.status === 200) acked.push({ kind, id: r.body.id, at: Date.now() });
      } else {
        const sent = await rig.send({ from: 'far@far.example', to: ['desk@backup-inbox.net'] }, rfc822({ From: 'far@far.example', To: 'desk@backup-inbox.net', Subject: `Inbound ${i}` }, `Body ${i} ${'y'.repeat(2000)}`));
        acked.push({ kind, id: sent.id, at: Date.now() });
      }
    } catch {
      // A refused write is simply not acknowledged.
    }
  }
}

/** Every table's primary keys (as JSON), read through a connection. */
function keysOf(db: BetterSqlite3.Database): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const tables = db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'").all() as { name: string }[];
  for (const { name } of tables) {
    const pk = (db.pragma(`table_info("${name}")`) as { name: string; pk: number }[]).filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => `"${c.name}"`);
    const select = pk.length ? pk.join(', ') : 'rowid';
    const rows = db.prepare(`select ${select} from "${name}"`).raw().all() as unknown[][];
    out.set(name, new Set(rows.map((r) => JSON.stringify(r))));
  }
  return out;
}

const writers = [writer('suppression'), writer('email'), writer('received')];
await sleep(1000);
const before = keysOf(liveDb);
const ackedBefore = acked.length;
const backupPath = join(backupRoot, 'nightly');
const child = spawn(svcBin, ['admin', 'backup', backupPath], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SVC_DATA_DIR: app.config.data_dir }, stdio: ['ignore', 'pipe', 'pipe'] });
const cli = await withDeadline('svc admin backup to finish', new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  child.once('close', (code) => resolve({ code, stdout, stderr }));
}), 90_000).catch((err: unknown) => { child.kill('SIGKILL'); throw err; });
const ackedDuring = acked.length - ackedBefore;
await sleep(500);
running = false;
await withDeadline('the load writers to finish their last write', Promise.all(writers));

// Restore as docs/operations.md says: database and spool from the backup, the kept secret key.
copyFileSync(join(backupPath, 'svc.sqlite'), join(restoredDir, 'svc.sqlite'));
cpSync(join(backupPath, 'spool'), join(restoredDir, 'spool'), { recursive: true });
copyFileSync(join(app.config.data_dir, 'secret.key'), join(restoredDir, 'secret.key'));
const restored = await startTestAppliance({ env: { SVC_DATA_DIR: restoredDir, SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000' } });
t.teardown(() => restored.stop());
const onRestored = (path: string) => call(restored.baseUrl, 'GET', path, { token: team.token });

t.test('svc admin backup PATH writes a checked copy while writes go on', async (t) => {
  t.equal(cli.code, 0, cli.stderr);
  t.match(cli.stdout, `backup written to ${backupPath}`);
  t.match(cli.stdout, /secret\.key is not in the backup/);
  t.ok(ackedDuring > 0, `${ackedDuring} writes were acknowledged while the backup ran`);
  const manifest = JSON.parse(readFileSync(join(backupPath, 'backup.json'), 'utf8'));
  t.match(manifest, { object: 'backup', path: backupPath });
  t.ok(manifest.database_pages > 1000, `${manifest.database_pages} pages (${manifest.database_bytes} bytes), ${manifest.restarts} restarts, ${manifest.duration_ms} ms`);
  t.ok(manifest.spool_files > 0, `${manifest.spool_files} spool files`);
  t.notOk(existsSync(`${backupPath}.partial`), 'no temporary folder is left');
  t.notOk(existsSync(join(backupPath, 'secret.key')), 'the secret key is not in the backup');
  const copy = new BetterSqlite3(join(backupPath, 'svc.sqlite'), { readonly: true });
  t.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
  copy.close();
});

t.test('a second backup to the same folder is refused', async (t) => {
  const { adminCall } = await import('../../bin/admin-client.js');
  const r = await adminCall(app.adminSocket, 'POST', '/admin/backup', { path: backupPath });
  t.equal(r.status, 422);
  t.match(r.body, { name: 'validation_error' });
  const relative = await adminCall(app.adminSocket, 'POST', '/admin/backup', { path: 'relative/path' });
  t.equal(relative.status, 422);
});

t.test('the restored appliance has every row committed before the backup began, in every table', async (t) => {
  const after = keysOf(restored.appliance.services.database.sqlite);
  const liveNow = keysOf(liveDb);
  for (const [table, keys] of before) {
    const there = after.get(table);
    t.ok(there, `${table} exists`);
    const missing = [...keys].filter((k) => !there!.has(k));
    t.same(missing.slice(0, 5), [], `${table}: all ${keys.size} rows from before the backup`);
    const foreign = [...there!].filter((k) => !liveNow.get(table)!.has(k));
    t.same(foreign.slice(0, 5), [], `${table}: nothing the live database never had`);
  }
  t.ok(before.get('suppressions')!.size > 0 && before.get('received_emails')!.size > 0, 'the load wrote before the backup');
});

t.test('rows of the tables that never change are identical', async (t) => {
  const copy = restored.appliance.services.database.sqlite;
  for (const table of ['suppressions', 'received_emails', 'received_attachments', 'webhook_endpoints', 'events', 'email_attachments', 'idempotency_keys']) {
    const rows = copy.prepare(`select * from "${table}"`).all() as Record<string, unknown>[];
    const pk = (copy.pragma(`table_info("${table}")`) as { name: string; pk: number }[]).filter((c) => c.pk > 0).map((c) => c.name);
    let differing = 0;
    for (const row of rows) {
      const live = liveDb.prepare(`select * from "${table}" where ${pk.map((c) => `"${c}" = ?`).join(' and ')}`).get(...pk.map((c) => row[c]));
      if (JSON.stringify(live) !== JSON.stringify(row)) differing++;
    }
    t.equal(differing, 0, `${table}: ${rows.length} rows identical`);
  }
});

t.test('through the API: acknowledged writes, received sources byte for byte, sealed secrets', async (t) => {
  const early = acked.filter((a, i) => i < ackedBefore);
  t.ok(early.length > 5, `${early.length} writes acknowledged before the backup`);
  for (const a of early) {
    const path = a.kind === 'suppression' ? `/suppressions/${a.id}` : a.kind === 'email' ? `/emails/${a.id}` : `/emails/receiving/${a.id}`;
    t.equal((await onRestored(path)).status, 200, `${a.kind} ${a.id}`);
  }
  for (const a of early.filter((x) => x.kind === 'received').slice(0, 5)) {
    const [mine, theirs] = await Promise.all([onRestored(`/emails/receiving/${a.id}`), api('GET', `/emails/receiving/${a.id}`)]);
    const [restoredRaw, liveRaw] = await Promise.all([fetch(mine.body.raw.download_url), fetch(theirs.body.raw.download_url)]);
    t.equal(restoredRaw.status, 200, 'raw source served from the restored spool');
    t.same(Buffer.from(await restoredRaw.arrayBuffer()), Buffer.from(await liveRaw.arrayBuffer()), `${a.id}: the same bytes`);
  }
  const shown = await onRestored(`/webhooks/${hook.id}`);
  t.equal(shown.body.signing_secret, hook.signing_secret, 'the signing secret opens with the kept key');
  t.equal((await call(restored.baseUrl, 'GET', '/api-keys', { token: team.token })).status, 200, 'the team key works on the restored copy');
});
