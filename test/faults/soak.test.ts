import t from 'tap';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

// The fault soak of bench/faults.ts, scaled to fit the suite: a real `bin/svc start` under mixed
// load (API sends, batch sends, inbound SMTP, webhook deliveries) takes kill -9 three times, a
// SIGTERM, a Redis kill and a Redis FLUSHALL, restarted each time. Every row of its table must
// show nothing lost and nothing delivered twice (webhook repeats only under one wh-id).
// Compiled next to this file: dist/test/faults → dist/bench.
const soak = resolve(import.meta.dirname, '../../bench/faults.js');
const env = {
  ...process.env,
  FAULTS_KILLS: '3', FAULTS_SIGTERMS: '1', FAULTS_REDIS_KILLS: '1', FAULTS_FLUSHES: '1',
  // test/faults/fsync.test.ts checks the fsync probe itself; here one reply of each kind will do.
  FAULTS_FSYNC_N: '2',
};
const run = await new Promise<{ code: number | null; out: string }>((done) => {
  const child = spawn(process.execPath, [soak], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  child.on('close', (code) => done({ code, out }));
});
const lines = run.out.split('\n');
for (const line of lines.filter((l) => /^(fault|svc |redis |total|RESULT|queue drained)/.test(l))) t.comment(line);

t.equal(run.code, 0, `the soak exits 0 (${lines.filter((l) => /FAIL|Error|lost/i.test(l)).slice(0, 3).join(' | ')})`);
t.match(run.out, /RESULT: nothing accepted was lost or delivered twice/);

interface Row { fault: string; load: string; injections: number; accepted: number; lost: number; duplicated: number; bad: number }
const rows: Row[] = lines.flatMap((line) => {
  const m = /^(svc kill -9|svc SIGTERM|redis kill -9|redis FLUSHALL|total)\s+(api send|batch send|inbound smtp|webhooks)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)(?: \(bad (\d+)\))?/.exec(line);
  return m ? [{ fault: m[1]!, load: m[2]!, injections: Number(m[3]), accepted: Number(m[4]), lost: Number(m[7]), duplicated: Number(m[8]), bad: Number(m[9] ?? 0) }] : [];
});
t.equal(rows.length, 20, 'a row for each fault and load, and the totals');
for (const row of rows) {
  const name = `${row.fault} / ${row.load}`;
  t.equal(row.lost, 0, `${name}: nothing lost of ${row.accepted} accepted`);
  if (row.load === 'webhooks') t.equal(row.bad, 0, `${name}: repeats only under the same wh-id`);
  else t.equal(row.duplicated, 0, `${name}: nothing delivered or stored twice`);
}
const kills = rows.filter((r) => r.fault === 'svc kill -9');
t.ok(kills.every((r) => r.injections === 3), 'svc was killed three times under each load');
t.ok(kills.every((r) => r.accepted > 0), 'and each load had work accepted around the kills');
