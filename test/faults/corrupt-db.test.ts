import t from 'tap';
import { cpSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { withDeadline } from '../helpers/deadline.js';
import { spawnSvc } from '../helpers/faults-svc.js';
import { call } from '../helpers/http.js';

// A damaged database file is found at start: `bin/svc start` exits 1 within a bound, with one
// stderr line naming the file and what to do, and leaves no process behind. Damage: the header
// overwritten, and pages in the middle overwritten with noise. An undamaged copy starts.
const root = mkdtempSync(join(tmpdir(), 'svc-corrupt-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const pristine = join(root, 'pristine');

// A real data folder: svc started, some rows written through the API, stopped cleanly (the WAL
// is folded into the file on close).
const first = await spawnSvc({ dataDir: pristine, roles: 'api', env: { SVC_RATE_LIMIT_BURST: '1000', SVC_RATE_LIMIT_PER_SECOND: '1000' } });
await first.ready();
const team = await first.newTeam('Corrupt');
for (let b = 0; b < 5; b++) {
  await call(first.baseUrl, 'POST', '/suppressions/batch/add', { token: team.token, body: { emails: Array.from({ length: 100 }, (_, i) => `p${b}-${i}-${'x'.repeat(60)}@far.example`) } });
}
first.proc.kill('SIGTERM');
await withDeadline('the first svc to exit after SIGTERM', first.exited, 60_000);

function damaged(name: string, offset: number, bytes: Buffer): string {
  const dir = join(root, name);
  cpSync(pristine, dir, { recursive: true, filter: (src) => !src.endsWith('.sock') });
  const fd = openSync(join(dir, 'svc.sqlite'), 'r+');
  writeSync(fd, bytes, 0, bytes.length, offset);
  closeSync(fd);
  return dir;
}

const size = statSync(join(pristine, 'svc.sqlite')).size;
const pageSize = 4096;
const middlePage = Math.floor(size / pageSize / 2);
const cases: [string, string][] = [
  ['header', damaged('header', 0, Buffer.from('This is not SQLite at all'))],
  ['pages in the middle', damaged('pages', middlePage * pageSize, randomBytes(pageSize * 3))],
];

t.test('the pristine copy had its WAL folded in, and starts', async (t) => {
  t.notOk(readdirSync(pristine).includes('svc.sqlite-wal') && statSync(join(pristine, 'svc.sqlite-wal')).size > 0, 'no WAL left');
  t.ok(size > pageSize * 20, `${size} bytes`);
  const svc = await spawnSvc({ dataDir: pristine });
  await svc.ready();
  t.equal((await call(svc.baseUrl, 'GET', '/suppressions?limit=1', { token: team.token })).status, 200);
  svc.proc.kill('SIGTERM');
  const exit = await withDeadline('svc on the pristine copy to exit after SIGTERM', svc.exited, 60_000);
  t.equal(exit.code, 0, `a clean stop (signal ${exit.signal}; ${svc.output().stderr.trim().slice(-300)})`);
});

for (const [what, dir] of cases) {
  t.test(`damage to the ${what}: exit 1 with one clear line`, async (t) => {
    const svc = await spawnSvc({ dataDir: dir });
    // Killed either way when the wait ends: a svc still running past the bound leaves nothing behind.
    const exit = await withDeadline(`svc to exit on its own at start (damaged ${what})`, svc.exited, 60_000).finally(() => svc.proc.kill('SIGKILL'));
    const { stderr } = svc.output();
    const lines = stderr.split('\n').filter(Boolean);
    t.equal(exit.code, 1, `exit code (signal ${exit.signal}) after ${Math.round(exit.atMs)} ms`);
    t.equal(lines.length, 1, `one line: ${stderr}`);
    t.match(lines[0], new RegExp(`^svc: storage: ${join(dir, 'svc.sqlite').replace(/[/.]/g, '\\$&')} is damaged \\(.+\\); svc will not start on it\\. Restore the latest backup`));
    t.notOk(readdirSync(dir).includes('redis.sock'), 'the private Redis was stopped');
  });
}
