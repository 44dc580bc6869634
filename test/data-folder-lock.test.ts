import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitWithin, waitFor, withDeadline } from './helpers/deadline.js';
import { spawnSvc, type SvcProcess } from './helpers/faults-svc.js';
import { runSvcCommand, type SvcRun } from './helpers/svc-command.js';

// A mistyped `svc start --role api` beside a running appliance once started a second private
// Redis on the same folder, failed on the port, and on its way out deleted the running one's
// redis.sock. Now the data folder is locked per role (and per outbound region, and for the private
// Redis) before anything starts: a second copy is refused in one line and touches nothing, while
// roles that share a folder, as the systemd units do, each run.
const dataDir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const redisSock = join(dataDir, 'redis.sock');

/** `svc start …` expected to be refused: run to completion, killed after 60 s. */
function refusedStart(args: string[], env: Record<string, string> = {}): Promise<SvcRun> {
  return runSvcCommand(['start', ...args], {
    PATH: process.env.PATH ?? '/usr/bin:/bin', SVC_DATA_DIR: dataDir, SVC_HTTP_PORT: '0', SVC_SMTP_PORT: '0', SVC_SMTP_HOST: '127.0.0.1', SVC_MAIL_HOSTNAME: 'mx.lock-test.net', ...env,
  });
}

/** `svc admin status` as the operator runs it, on this folder's socket. */
function adminStatus(): Promise<SvcRun> {
  return runSvcCommand(['admin', 'status'], { PATH: process.env.PATH ?? '/usr/bin:/bin', SVC_DATA_DIR: dataDir }, 30_000);
}

function redisAnswers(path: string): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ path });
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => { socket.destroy(); done(d.toString().startsWith('+PONG')); });
    socket.once('error', () => done(false));
    socket.once('timeout', () => { socket.destroy(); done(false); });
  });
}

const env = { SVC_MAIL_HOSTNAME: 'mx.lock-test.net', SVC_LOG_LEVEL: 'info' };
const started: SvcProcess[] = [];
t.teardown(async () => {
  for (const svc of started) if (svc.proc.exitCode === null && svc.proc.signalCode === null) svc.proc.kill('SIGKILL');
});

const first = await spawnSvc({ dataDir, roles: 'api', env });
started.push(first);
await first.ready();

t.test('a second copy of a running role is refused in one line and harms nothing', async (t) => {
  const redisLock = () => readFileSync(join(dataDir, 'locks', 'redis.lock'), 'utf8');
  const before = redisLock();
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--role', 'api'], {}, /^svc: data folder .* is in use: svc pid \d+ \(roles api, since [^)]+\) already runs the api role there; stop it first\n$/],
    [[], {}, /is in use: svc pid \d+ .*already runs the api role/],
    // Another role, but on its own private Redis: that would replace the running one's socket.
    [['--role', 'jobs'], {}, /is in use: svc pid \d+ .* runs its private Redis; stop that svc first, or give every process one Redis with SVC_REDIS_URL\n$/],
  ];
  for (const [args, extra, want] of cases) {
    const r = await refusedStart(args, extra);
    const label = `svc start ${args.join(' ')}`;
    t.equal(r.code, 1, `${label}: exit 1`);
    t.match(r.stderr, want, label);
    t.equal(r.stderr.split('\n').filter(Boolean).length, 1, `${label}: one line: ${r.stderr}`);
    t.ok(existsSync(redisSock), `${label}: redis.sock is still there`);
    t.ok(await redisAnswers(redisSock), `${label}: the running svc's Redis still answers`);
    t.equal(redisLock(), before, `${label}: the first svc still holds its locks`);
    t.equal((await fetch(`${first.baseUrl}/health`)).status, 200, `${label}: the running svc still answers`);
  }
  t.equal(JSON.parse(readFileSync(join(dataDir, 'locks', 'api.lock'), 'utf8')).pid, first.proc.pid, 'the first svc holds the api lock');
});

t.test('roles sharing the folder and one Redis run side by side (the systemd layout); two copies of one do not', async (t) => {
  const shared = { ...env, SVC_REDIS_URL: `unix://${redisSock}` };
  const jobs = await spawnSvc({ dataDir, roles: 'jobs', env: shared });
  started.push(jobs);
  await waitFor('the jobs role to start', async () => (jobs.output().stdout.includes('"msg":"svc started"') ? true : undefined), 60_000);
  const outbound = await spawnSvc({ dataDir, roles: 'outbound', env: { ...shared, SVC_OUTBOUND_REGIONS: 'us-east-1,eu-west-1' } });
  started.push(outbound);
  await waitFor('the outbound role to start', async () => (outbound.output().stdout.includes('"msg":"svc started"') ? true : undefined), 60_000);

  const twice = await refusedStart(['--role', 'jobs'], { SVC_REDIS_URL: `unix://${redisSock}` });
  t.equal(twice.code, 1);
  t.match(twice.stderr, new RegExp(`svc pid ${jobs.proc.pid} \\(roles jobs, .*already runs the jobs role`));
  // svc-outbound@all beside svc-outbound@us-east-1: one region served twice is refused.
  const overlap = await refusedStart(['--role', 'outbound', '--regions', 'all'], { SVC_REDIS_URL: `unix://${redisSock}` });
  t.equal(overlap.code, 1);
  t.match(overlap.stderr, new RegExp(`svc pid ${outbound.proc.pid} .*already runs the outbound role for (us-east-1|eu-west-1) there`));
  const otherRegion = await spawnSvc({ dataDir, roles: 'outbound', env: { ...shared, SVC_OUTBOUND_REGIONS: 'sa-east-1' } });
  started.push(otherRegion);
  await waitFor('the sa-east-1 outbound process to start', async () => {
    if (otherRegion.proc.exitCode !== null) throw new Error(`exited: ${otherRegion.output().stderr}`);
    return otherRegion.output().stdout.includes('"msg":"svc started"') ? true : undefined;
  }, 60_000);

  // svc admin status, through the real CLI: every process on the folder, each with its roles.
  const status = await adminStatus();
  t.equal(status.code, 0, status.stderr + status.stdout);
  const body = JSON.parse(status.stdout) as { pid: number; roles: string[]; processes: { pid: number; roles: string[]; regions: string[]; private_redis: boolean; this_process: boolean }[] };
  t.equal(body.pid, first.proc.pid, 'answered by the api process');
  t.same(body.roles, ['api']);
  t.same(body.processes.map((p) => [p.pid, p.roles, p.regions, p.private_redis, p.this_process]), [
    [first.proc.pid, ['api'], [], true, true],
    [jobs.proc.pid, ['jobs'], [], false, false],
    [outbound.proc.pid, ['outbound'], ['us-east-1', 'eu-west-1'], false, false],
    [otherRegion.proc.pid, ['outbound'], ['sa-east-1'], false, false],
  ], 'each process with its roles and regions, oldest first');
  for (const svc of [otherRegion, outbound, jobs]) {
    svc.proc.kill('SIGTERM');
    t.match(await withDeadline('svc to stop', svc.exited, 30_000), { code: 0 });
  }
  t.notOk(existsSync(join(dataDir, 'locks', 'jobs.lock')), 'a stopped role gives its lock back');
  const after = JSON.parse((await adminStatus()).stdout) as { processes: { pid: number }[] };
  t.same(after.processes.map((p) => p.pid), [first.proc.pid], 'stopped processes leave the status');
  t.ok(existsSync(join(dataDir, 'locks', 'api.lock')), 'the others keep theirs');
});

t.test('after kill -9 the lock is stale: the next start takes it over', async (t) => {
  first.proc.kill('SIGKILL');
  await exitWithin('svc to die', first.proc);
  t.ok(existsSync(join(dataDir, 'locks', 'api.lock')), 'the dead process left its lock file');
  const next = await spawnSvc({ dataDir, roles: 'api', env });
  started.push(next);
  await next.ready();
  t.equal(JSON.parse(readFileSync(join(dataDir, 'locks', 'api.lock'), 'utf8')).pid, next.proc.pid, 'the new process holds it');
  next.proc.kill('SIGTERM');
  t.match(await withDeadline('svc to stop', next.exited, 30_000), { code: 0 });
});
