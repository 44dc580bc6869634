import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SoakOutcome } from '../../bench/faults.js';
import { withDeadline } from '../helpers/deadline.js';

// The fault soak of bench/faults.ts, scaled to fit the suite: a real `bin/svc start` under mixed
// load (API sends, batch sends, inbound SMTP, webhook deliveries) takes kill -9 three times, a
// SIGTERM, a Redis kill and a Redis FLUSHALL, restarted each time. Every row of its table must
// show nothing lost and nothing delivered twice (webhook repeats only under one wh-id). The bench
// hands its outcome over as data (`--json`); its printed table is only shown here.
// Compiled next to this file: dist/test/faults → dist/bench.
const soak = resolve(import.meta.dirname, '../../bench/faults.js');
// The soak alone takes about 100 s on two idle cores, more beside another test file: this file
// gets a longer timeout than the suite's (package.json "tap.timeout"), and the soak a deadline
// inside it, so that a stuck soak fails naming itself.
const SOAK_MS = 300_000;
t.setTimeout(SOAK_MS + 60_000);
const env = {
  ...process.env,
  FAULTS_KILLS: '3', FAULTS_SIGTERMS: '1', FAULTS_REDIS_KILLS: '1', FAULTS_FLUSHES: '1',
  // test/faults/fsync.test.ts checks the fsync probe itself; here one reply of each kind will do.
  FAULTS_FSYNC_N: '2',
};
const dir = mkdtempSync(join(tmpdir(), 'svc-soak-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const jsonFile = join(dir, 'outcome.json');

// Its own process group: a soak cut off at the deadline takes its svc and Redis children with it.
const child = spawn(process.execPath, [soak, '--json', jsonFile], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
let stdout = '';
let stderr = '';
child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
const code = await withDeadline('the soak to finish', new Promise<number | null>((done) => child.on('close', (c) => done(c))), SOAK_MS)
  .catch((err: Error) => {
    process.kill(-child.pid!, 'SIGKILL');
    throw new Error(`${err.message}; last output: ${`${stdout}\n${stderr}`.trim().split('\n').slice(-5).join(' | ')}`, { cause: err });
  });
for (const line of stdout.split('\n').filter(Boolean)) t.comment(line);

t.equal(code, 0, `the soak exits 0 (${stderr.trim().split('\n').slice(-3).join(' | ')})`);
// An early error leaves only `error` in the file: the checks below then fail instead of throwing.
const outcome = { rows: [], api: {}, fsync: {}, ...JSON.parse(readFileSync(jsonFile, 'utf8')) } as SoakOutcome;
t.equal(outcome.error, undefined, 'the soak ran to its end');
t.equal(outcome.bad, false, 'nothing accepted was lost or delivered twice');
t.equal(outcome.undrained, 0, 'the outbound queue drained');

const faults = ['svc kill -9', 'svc SIGTERM', 'redis kill -9', 'redis FLUSHALL', 'total'];
const loads = ['api send', 'batch send', 'inbound smtp', 'webhooks'];
t.same(outcome.rows.map((r) => `${r.fault} / ${r.load}`), faults.flatMap((f) => loads.map((l) => `${f} / ${l}`)), 'a row for each fault and load, and the totals');
for (const row of outcome.rows) {
  const name = `${row.fault} / ${row.load}`;
  t.equal(row.lost, 0, `${name}: nothing lost of ${row.accepted} accepted`);
  if (row.load === 'webhooks') t.equal(row.bad, 0, `${name}: repeats only under the same wh-id`);
  else t.equal(row.duplicated, 0, `${name}: nothing delivered or stored twice`);
}
const kills = outcome.rows.filter((r) => r.fault === 'svc kill -9');
t.same(kills.map((r) => r.injections), [3, 3, 3, 3], 'svc was killed three times under each load');
t.same(kills.filter((r) => r.accepted === 0).map((r) => r.load), [], 'and each load had work accepted around the kills');
t.equal(outcome.api.hung, 0, 'no API send hung');

t.test('fsync before every reply (the strace probe)', { skip: outcome.fsync.skipped ?? false }, async (t) => {
  t.equal(outcome.fsync.checked, 4, 'two 200s and two 250s checked');
  t.equal(outcome.fsync.violations, 0, 'each after an fsync of what it promises');
  t.equal(outcome.fsync.repliesWithoutFsync, 4, 'with fsync disabled, every reply was seen');
  t.equal(outcome.fsync.flaggedWithoutFsync, 4, 'and every one flagged');
});
