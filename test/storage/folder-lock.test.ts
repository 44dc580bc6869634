import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import t from 'tap';
import { FolderInUseError, lockDataFolder, lockHolders, TAKEOVER_GUARD, type LockHolder } from '../../storage/files/index.js';
import { exitWithin, withDeadline } from '../helpers/deadline.js';

// The data folder's locks: one per role, per outbound region and for the private Redis. Roles
// share a folder; two holders of one name never do, whether in one process or two; a holder that
// is gone (exited, killed, or its pid now someone else's) gives its lock up.
const root = mkdtempSync(join(tmpdir(), 'svc-lock-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => { const dir = join(root, String(n++)); mkdirSync(dir); return dir; };
const owner = { roles: ['api'], regions: [], version: 'test' };
const lockFile = (dir: string, name: string) => join(dir, 'locks', `${name}.lock`);

function refusal(fn: () => unknown): FolderInUseError | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof FolderInUseError) return err;
    throw err;
  }
}

t.test('roles share a folder; a second holder of one name is refused, naming the first', async (t) => {
  const dir = freshDir();
  const first = lockDataFolder(dir, ['api', 'jobs'], { roles: ['api', 'jobs'], regions: [], version: 'test' });
  const inbound = lockDataFolder(dir, ['inbound'], { roles: ['inbound'], regions: [], version: 'test' });
  const refused = refusal(() => lockDataFolder(dir, ['jobs'], owner));
  t.ok(refused, 'a second jobs lock is refused, even in the same process');
  t.match(refused?.holder, { name: 'jobs', pid: process.pid, roles: ['api', 'jobs'] });
  t.equal(refused?.dataDir, dir);
  t.same(lockHolders(dir).map((h) => h.name), ['api', 'inbound', 'jobs'], 'the live holders, by name');
  t.equal(statSync(lockFile(dir, 'api')).mode & 0o777, 0o600, 'lock files are owner-only');
  t.equal(statSync(join(dir, 'locks')).mode & 0o777, 0o700);
  first.release();
  inbound.release();
  t.same(readdirSync(join(dir, 'locks')), [], 'released locks leave nothing behind');
  const again = lockDataFolder(dir, ['jobs'], owner);
  again.release();
});

t.test('all or nothing: a refused name gives back the ones taken before it', async (t) => {
  const dir = freshDir();
  const held = lockDataFolder(dir, ['redis'], owner);
  t.ok(refusal(() => lockDataFolder(dir, ['api', 'inbound', 'redis'], owner)), 'refused on redis');
  t.notOk(existsSync(lockFile(dir, 'api')), 'api was given back');
  t.notOk(existsSync(lockFile(dir, 'inbound')), 'inbound was given back');
  held.release();
  t.ok(existsSync(join(dir, 'locks')));
  t.same(readdirSync(join(dir, 'locks')), []);
});

t.test('a release never removes a lock another holder took since', async (t) => {
  const dir = freshDir();
  const first = lockDataFolder(dir, ['api'], owner);
  // Someone else's file in its place (as after a takeover): the first release must leave it.
  const mine = JSON.parse(readFileSync(lockFile(dir, 'api'), 'utf8')) as LockHolder;
  writeFileSync(lockFile(dir, 'api'), JSON.stringify({ ...mine, token: 'another' }));
  first.release();
  t.equal((JSON.parse(readFileSync(lockFile(dir, 'api'), 'utf8')) as LockHolder).token, 'another', 'the other holder\'s file is still there');
});

/** A pid that no process has any more: a child that ran and exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await exitWithin('a short-lived child to exit', child, 10_000);
  return child.pid!;
}

t.test('a lock whose holder is gone is taken over: exited, pid reused, or an unreadable file', async (t) => {
  const live = lockHolders(freshDir());
  t.same(live, [], 'an empty folder has no holders');
  const stale = (dir: string, holder: Partial<LockHolder>) => {
    mkdirSync(join(dir, 'locks'), { recursive: true });
    writeFileSync(lockFile(dir, 'api'), JSON.stringify({ name: 'api', started_at: '2026-01-01T00:00:00Z', roles: ['api'], regions: [], version: 'old', token: 'old', ...holder }));
  };
  const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
  const myTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  t.ok(myTicks > 0, 'this process\'s start time is readable');
  const cases: [string, Partial<LockHolder> | string][] = [
    ['a process that exited', { pid: await deadPid(), start_ticks: 1 }],
    ['a pid now running another process (this one, started at another time)', { pid: process.pid, start_ticks: myTicks + 1 }],
    ['a file that is not a lock', 'not json'],
  ];
  for (const [label, holder] of cases) {
    const dir = freshDir();
    if (typeof holder === 'string') {
      mkdirSync(join(dir, 'locks'));
      writeFileSync(lockFile(dir, 'api'), holder);
    } else {
      stale(dir, holder);
    }
    t.same(lockHolders(dir), [], `${label}: not listed as a holder`);
    const taken = lockDataFolder(dir, ['api'], owner);
    t.match(JSON.parse(readFileSync(lockFile(dir, 'api'), 'utf8')), { pid: process.pid, start_ticks: myTicks, version: 'test' }, `${label}: taken over`);
    taken.release();
  }
  const dir = freshDir();
  stale(dir, { pid: process.pid, start_ticks: myTicks });
  t.ok(refusal(() => lockDataFolder(dir, ['api'], owner)), 'the same pid and start time is the holder itself: refused');
});

/** Starts a node child running this module script; its stdout comes line by line. */
function racer(script: string) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const waiters: (() => void)[] = [];
  child.stdout!.on('data', (c: Buffer) => { out += c.toString(); for (const wake of waiters.splice(0)) wake(); });
  const line = (at: number) => new Promise<string>((done) => {
    const check = () => { const got = out.split('\n'); if (got.length > at + 1) done(got[at]!); else waiters.push(check); };
    check();
  });
  return { child, line };
}

const storage = resolve(import.meta.dirname, '../../storage/files/index.js');

t.test('processes racing for one stale lock: exactly one takes it, round after round', async (t) => {
  // Each child loads the module, says it is ready, tries when it reads "go" (all at once), says
  // what it got, and keeps it until stdin closes. A lost race is rare (one round in about thirty under load), so it runs five times.
  for (let round = 0; round < 5; round++) {
    const dir = freshDir();
    mkdirSync(join(dir, 'locks'));
    writeFileSync(lockFile(dir, 'api'), JSON.stringify({ name: 'api', pid: await deadPid(), start_ticks: 1, started_at: '', roles: [], regions: [], version: 'old', token: 'old' }));
    const script = `
      import { lockDataFolder } from ${JSON.stringify(storage)};
      process.stdout.write('ready\\n');
      process.stdin.once('data', () => {
        let said = 'refused';
        try { lockDataFolder(${JSON.stringify(dir)}, ['api'], { roles: ['api'], regions: [], version: 'racer' }); said = 'took'; } catch {}
        process.stdout.write(said + '\\n');
      });
      process.stdin.on('end', () => process.exit(0));`;
    const racers = Array.from({ length: 8 }, () => racer(script));
    await withDeadline('every racer to load', Promise.all(racers.map((r) => r.line(0))), 30_000);
    for (const { child } of racers) child.stdin!.write('go\n');
    const answers = await withDeadline('every racer to answer', Promise.all(racers.map((r) => r.line(1))), 30_000);
    t.equal(answers.filter((a) => a === 'took').length, 1, `round ${round}, one winner: ${answers.join(' ')}`);
    const holder = JSON.parse(readFileSync(lockFile(dir, 'api'), 'utf8')) as LockHolder;
    t.equal(holder.pid, racers[answers.indexOf('took')]!.child.pid, `round ${round}: the file names the winner`);
    t.same(readdirSync(join(dir, 'locks')).sort(), ['api.lock', TAKEOVER_GUARD], `round ${round}: no file left aside`);
    for (const { child } of racers) child.stdin!.end();
    await Promise.all(racers.map(({ child }) => exitWithin('a racer to exit', child, 10_000)));
  }
});

t.test('a takeover guard whose holder was killed does not stop the next takeover', async (t) => {
  const dir = freshDir();
  mkdirSync(join(dir, 'locks'));
  const stale = { name: 'api', pid: await deadPid(), start_ticks: 1, started_at: '', roles: [], regions: [], version: 'old', token: 'old' };
  writeFileSync(lockFile(dir, 'api'), JSON.stringify(stale));
  const guard = join(dir, 'locks', TAKEOVER_GUARD);
  const sqlite = resolve(import.meta.dirname, '../../../node_modules/better-sqlite3/lib/index.js');
  const holder = racer(`
    import Database from ${JSON.stringify(sqlite)};
    const db = new Database(${JSON.stringify(guard)});
    db.exec('BEGIN EXCLUSIVE');
    process.stdout.write('holding\\n');
    setInterval(() => {}, 1000);`);
  t.equal(await withDeadline('the guard to be held', holder.line(0), 30_000), 'holding');
  holder.child.kill('SIGKILL');
  await exitWithin('the guard holder to die', holder.child, 10_000);
  const started = Date.now();
  const taken = lockDataFolder(dir, ['api'], owner);
  t.ok(Date.now() - started < 5_000, `taken over at once (${Date.now() - started} ms), not after the guard's wait`);
  t.match(taken.replaced, [{ token: 'old' }], 'the gone holder is reported');
  taken.release();
});
