import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { exitWithin, waitFor } from './helpers/deadline.js';
import { call } from './helpers/http.js';
import { freePort } from './helpers/ports.js';
import { svcBin } from './helpers/faults-svc.js';
import { runSvcCommand } from './helpers/svc-command.js';

// `svc db rebuild` as an operator upgrading an old install runs it: a database svc made with
// 4 KiB pages (as every svc before 16 KiB pages did), holding a team made through the CLI; refused
// while svc runs and while another process has the file open; then rewritten with svc stopped,
// and served again by svc with the team still there.

const dataDir = mkdtempSync(join(tmpdir(), 'svc-db-rebuild-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const dbPath = join(dataDir, 'svc.sqlite');

const svc = (args: string[], env: Record<string, string>) => runSvcCommand(args, env);

async function startSvc(t: Test, env: Record<string, string>, base: string): Promise<{ proc: ChildProcess; log: () => string }> {
  const proc = spawn(svcBin, ['start', '--role', 'api'], { env: { ...env, SVC_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout!.on('data', (c: Buffer) => { log += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { log += c.toString(); });
  t.teardown(() => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL'); });
  await waitFor('svc to answer GET /health', async () => {
    if (proc.exitCode !== null) throw new Error(`svc exited early: ${log}`);
    return (await call(base, 'GET', '/health').catch(() => undefined))?.status === 200 ? true : undefined;
  }, 60_000);
  return { proc, log: () => log };
}

async function stopSvc(proc: ChildProcess): Promise<void> {
  proc.kill('SIGTERM');
  await exitWithin('svc to stop after SIGTERM', proc, 30_000);
}

const pragma = (name: string) => {
  const db = new BetterSqlite3(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.pragma(name, { simple: true });
  } finally {
    db.close();
  }
};

t.test('an old install\'s database is rebuilt with 16 KiB pages, refused while in use, and served again', async (t) => {
  const httpPort = await freePort();
  const base = `http://127.0.0.1:${httpPort}`;
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn',
    SVC_MAIL_HOSTNAME: 'mx.rebuild-test.net', SVC_HTTP_PORT: String(httpPort), SVC_HTTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(await freePort()),
  };
  // The file an older svc made: 4 KiB pages, fixed when its first page is written.
  const old = new BetterSqlite3(dbPath);
  old.pragma('page_size = 4096');
  old.pragma('journal_mode = WAL');
  old.close();

  const first = await startSvc(t, env, base);
  t.match(first.log(), /"pageBytes":4096.*svc db rebuild/, 'svc says at start that the file has smaller pages and what rewrites it');
  const team = await svc(['admin', 'team', 'create', 'Acme'], env);
  t.equal(team.code, 0, team.stderr + team.stdout);
  const teamId = /^team ([0-9a-f-]{36}) "Acme" created$/m.exec(team.stdout)?.[1];
  t.ok(teamId, team.stdout);

  const whileRunning = await svc(['db', 'rebuild'], env);
  t.equal(whileRunning.code, 1, 'refused while svc runs on the folder');
  t.match(whileRunning.stdout, new RegExp(`svc pid ${first.proc.pid} \\(roles api, .*stop every svc unit first`));
  await stopSvc(first.proc);
  t.equal(pragma('page_size'), 4096, 'the refused rebuild left the file alone');

  // No svc runs, but another process has the file open (a backup tool, sqlite3 in a shell).
  const reader = new BetterSqlite3(dbPath, { readonly: true });
  reader.prepare('select count(*) from teams').get();
  const whileOpen = await svc(['db', 'rebuild'], env);
  reader.close();
  t.equal(whileOpen.code, 1, `refused while another process has the file open: ${whileOpen.stdout}${whileOpen.stderr}`);
  t.match(whileOpen.stdout, /is open in another process; stop it first/);
  t.equal(pragma('page_size'), 4096);

  // What a rebuild killed mid-copy leaves: the next run starts its copy afresh.
  writeFileSync(`${dbPath}.rebuild`, 'half a copy');
  const modeBefore = statSync(dbPath).mode & 0o777;
  const rebuilt = await svc(['db', 'rebuild'], env);
  t.equal(rebuilt.code, 0, rebuilt.stderr + rebuilt.stdout);
  t.equal(rebuilt.stderr, '');
  t.match(rebuilt.stdout, /rewriting .*svc\.sqlite \(4096-byte pages\)/);
  t.match(rebuilt.stdout, /4096 → 16384-byte pages, .* MiB, \d+ tables and \d+ rows checked/);
  t.equal(pragma('page_size'), 16384, 'the file has 16 KiB pages');
  t.equal(pragma('journal_mode'), 'wal', 'and is in WAL mode, as svc keeps it');
  t.equal(pragma('quick_check'), 'ok');
  t.equal(statSync(dbPath).mode & 0o777, modeBefore, 'its mode is the one it had');
  t.same(readdirSync(dataDir).filter((f) => f.startsWith('svc.sqlite.')), [], 'no copy is left beside it, nor the stray one');
  t.notOk(existsSync(join(dataDir, 'locks', 'api.lock')), 'its locks are released');

  const again = await svc(['db', 'rebuild'], env);
  t.equal(again.code, 0);
  t.match(again.stdout, /has 16384-byte pages already: nothing to do/);

  const second = await startSvc(t, env, base);
  t.notMatch(second.log(), /svc db rebuild/, 'no note at start any more');
  const list = await svc(['admin', 'team', 'list'], env);
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, teamId ?? 'no team id', 'the team made before the rebuild is served after it');
  await stopSvc(second.proc);
});

t.test('a PostgreSQL install has nothing to rebuild', async (t) => {
  const run = await svc(['db', 'rebuild'], {
    PATH: process.env.PATH ?? '/usr/bin:/bin', SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-db-pg-')), SVC_MAIL_HOSTNAME: 'mx.rebuild-test.net',
    SVC_DATABASE_URL: 'postgres://127.0.0.1/nowhere',
  });
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /PostgreSQL .*nothing to rebuild/);
});
