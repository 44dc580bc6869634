import t from 'tap';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { schema } from '../config/schema.js';
import { exitWithin, waitFor, withDeadline } from './helpers/deadline.js';
import { call } from './helpers/http.js';
import { svcBin } from './helpers/faults-svc.js';
import { freePort } from './helpers/ports.js';
import { runSvcCommand, type SvcRun } from './helpers/svc-command.js';

// The real executable, as an operator runs it: bin/svc → the carried Node → dist/bin/svc.js.

const dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

/** Only these variables reach svc: nothing from the test runner's own SVC_* settings. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn',
    SVC_MAIL_HOSTNAME: 'mx.cli-test.net', ...extra,
  };
}

/** Runs `svc …` to completion (killed after timeoutMs so a wrong acceptance cannot hang the file). */
const svc = runSvcCommand;

const lines = (text: string) => text.split('\n').filter((l) => l.length > 0);

/** Many `svc …` runs, four at a time: each loads Node, and a 2-core machine chokes on dozens at once. */
async function svcEach(cases: string[][], env: Record<string, string>): Promise<SvcRun[]> {
  const runs: SvcRun[] = [];
  for (let i = 0; i < cases.length; i += 4) runs.push(...await Promise.all(cases.slice(i, i + 4).map((args) => svc(args, env))));
  return runs;
}

t.test('svc config print prints every key with its doc', async (t) => {
  const r = await svc(['config', 'print'], cleanEnv({ SVC_HTTP_PORT: '4321' }));
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr, '');
  for (const [key, spec] of Object.entries(schema)) {
    t.match(r.stdout, new RegExp(`^${key} = `, 'm'), `${key} printed`);
    t.match(r.stdout, spec.doc, `${key} doc printed`);
  }
  t.match(r.stdout, /^http_port = 4321$/m, 'the effective value, from the environment');
  t.ok(lines(r.stdout).includes(`data_dir = ${JSON.stringify(dataDir)}`), 'data_dir from the environment');
});

t.test('a bad setting exits 1 with one stderr line naming the key', async (t) => {
  const cases: [Record<string, string>, string[], RegExp][] = [
    [{ SVC_HTTP_PORT: 'abc' }, ['config', 'print'], /^config: SVC_HTTP_PORT: must be a whole number/],
    [{ SVC_FOO: '1' }, ['config', 'print'], /^config: SVC_FOO: unknown setting/],
    [{ SVC_LOG_LEVEL: 'loud' }, ['start'], /^config: SVC_LOG_LEVEL: must be one of/],
    [{ SVC_HTTP_PORT: '99999' }, ['admin', 'status'], /^config: SVC_HTTP_PORT: must be at most 65535/],
    [{ SVC_MAIL_HOSTNAME: 'vm' }, ['start'], /^config: SVC_MAIL_HOSTNAME: must be a fully qualified host name like mail\.example\.com; "vm" is a single label/],
    // The README once said `export SVC_KEY=…`: the prefix is svc's, and the line says so.
    [{ SVC_KEY: 'svc_x' }, ['admin', 'status'], /^config: SVC_KEY: unknown setting \(the SVC_ prefix is reserved for svc's settings/],
  ];
  const runs = await Promise.all(cases.map(([env, args]) => svc(args, cleanEnv(env))));
  for (const [i, [env, args, want]] of cases.entries()) {
    const r = runs[i]!;
    const label = `${JSON.stringify(env)} svc ${args.join(' ')}`;
    t.equal(r.code, 1, label);
    t.equal(lines(r.stderr).length, 1, `${label}: exactly one line on stderr: ${r.stderr}`);
    t.match(r.stderr, want, label);
    t.equal(r.stdout, '', `${label}: nothing on stdout`);
  }
});

t.test('a mistyped command line is one stderr line and exit 2, and starts nothing', async (t) => {
  // A fresh data folder svc must not even create: nothing may start (before, `--rol api` was
  // ignored and every role started, port 25 included).
  const untouched = join(dataDir, 'never-created');
  const cases: [string[], RegExp][] = [
    [['start', '--rol', 'api'], /^svc start: unknown option --rol \(did you mean --role\?\)/],
    [['start', '--role', 'bogus'], /^svc start: --role: unknown role "bogus"; one of all, api, inbound, outbound, jobs\n/],
    [['start', '--role=bogus'], /^svc start: --role: unknown role "bogus"/],
    [['start', '--role', 'api,bogus'], /^svc start: --role: unknown role "bogus"/],
    [['start', '--role'], /^svc start: --role needs a value/],
    [['start', 'api'], /^svc start: unexpected argument "api"/],
    [['start', '--role', 'outbound', '--regions', 'mars-east-1'], /^svc start: --regions: unknown region "mars-east-1"; one of all, us-east-1/],
    [['start', '--role', 'outbound', '--regions=us-east-1,mars-east-1'], /^svc start: --regions: unknown region "mars-east-1"/],
    [['start', '--role', 'outbound', '--regions='], /^svc start: --regions: needs a value/],
    [['frobnicate'], /^svc: unknown command "frobnicate"; one of start, config, admin, db, version/],
    [['--verbose'], /^svc: unknown option --verbose/],
    [[], /^svc: a command is needed/],
    [['config'], /^svc config: a subcommand is needed; one of print/],
    [['config', 'show'], /^svc config: unknown subcommand "show"/],
    [['config', 'print', '--all'], /^svc config print: unknown option --all/],
    [['version', 'now'], /^svc version: unexpected argument "now"/],
    [['admin'], /^svc admin: a command is needed/],
    [['admin', 'frob'], /^svc admin: unknown command "frob"; one of team, key, domain, status, backup/],
    [['admin', 'key'], /^svc admin key: an action is needed; one of create, list, revoke/],
    [['admin', 'key', 'rotate'], /^svc admin key: unknown action "rotate"/],
    [['admin', 'key', 'create', '--team', 'Acme'], /^svc admin key create: --name is required/],
    [['admin', 'key', 'create', '--team', 'Acme', '--name', 'k', '--permission', 'root'], /^svc admin key create: --permission: unknown value "root"; one of full_access, sending_access\n/],
    [['admin', 'key', 'list', '--teams', 'Acme'], /^svc admin key list: unknown option --teams \(did you mean --team\?\)/],
    [['admin', 'key', 'revoke'], /^svc admin key revoke: KEY_ID\|TOKEN is needed/],
    [['admin', 'key', 'revoke', 'a', 'b'], /^svc admin key revoke: unexpected argument "b"/],
    [['admin', 'status', '--json'], /^svc admin status: unknown option --json/],
    [['admin', 'backup', '/tmp/a', '/tmp/b'], /^svc admin backup: unexpected argument "\/tmp\/b"/],
  ];
  const runs = await svcEach(cases.map(([args]) => args), cleanEnv({ SVC_DATA_DIR: untouched, SVC_HTTP_PORT: '0', SVC_SMTP_PORT: '0' }));
  for (const [i, [args, want]] of cases.entries()) {
    const r = runs[i]!;
    const label = `svc ${args.join(' ')}`;
    t.equal(r.code, 2, `${label}: exit 2`);
    t.equal(lines(r.stderr).length, 1, `${label}: one line: ${r.stderr}`);
    t.match(r.stderr, want, label);
    t.equal(r.stdout, '', `${label}: nothing on stdout`);
  }
  t.notOk(existsSync(untouched), 'no data folder was made: nothing started');
});

t.test('every command and subcommand has --help: usage on stdout, exit 0, no config needed', async (t) => {
  const top = await svc(['--help'], cleanEnv());
  t.equal(top.code, 0, top.stderr);
  const admin = await svc(['admin', '--help'], cleanEnv());
  t.equal(admin.code, 0, admin.stderr);
  // Every admin command the help lists, by its words: `  svc admin key create --team …`.
  const adminCommands = [...admin.stdout.matchAll(/^ {2}svc admin ([a-z]+(?: [a-z]+)?)(?= |$)/gm)].map((m) => m[1]!.split(' '));
  t.ok(adminCommands.length >= 9, `svc admin --help lists its commands: ${adminCommands.map((c) => c.join(' ')).join(', ')}`);
  const cases: string[][] = [
    ['help'], ['-h'], ['start', '--help'], ['start', '-h'], ['start', '--role', 'api', '--help'], ['config', '--help'], ['config', 'print', '--help'],
    ['version', '--help'], ['db', '--help'], ['db', 'rebuild', '--help'], ['admin', 'help'], ['admin', 'team', '--help'], ['admin', 'key', '--help'], ['admin', 'domain', '--help'],
    ...adminCommands.map((words) => ['admin', ...words, '--help']),
  ];
  // A broken setting: help must not need the configuration.
  const runs = await svcEach(cases, cleanEnv({ SVC_HTTP_PORT: 'abc' }));
  for (const [i, args] of cases.entries()) {
    const r = runs[i]!;
    const label = `svc ${args.join(' ')}`;
    t.equal(r.code, 0, `${label}: exit 0 (${r.stderr})`);
    t.equal(r.stderr, '', `${label}: nothing on stderr`);
    t.match(r.stdout, /^usage: svc/, `${label}: starts with a usage line`);
  }
  const start = runs[cases.findIndex((c) => c[0] === 'start')]!;
  t.match(start.stdout, /--role all\|ROLE/, 'svc start --help names --role');
  t.match(start.stdout, /--regions/, 'and --regions');
  for (const words of adminCommands) {
    const r = runs[cases.findIndex((c) => c.join(' ') === ['admin', ...words, '--help'].join(' '))]!;
    t.match(r.stdout, new RegExp(`^usage: svc admin ${words.join(' ')}`), `svc admin ${words.join(' ')} --help is its own`);
  }
  t.match(top.stdout, /svc start/);
  t.match(top.stdout, /SVC_ prefix/);
});

t.test('svc admin with no svc running exits 1 naming the socket', async (t) => {
  const admin = await svc(['admin', 'status'], cleanEnv());
  t.equal(admin.code, 1);
  t.equal(lines(admin.stderr).length, 1, admin.stderr);
  t.match(admin.stderr, `no svc is listening on ${join(dataDir, 'admin.sock')}`);
});

t.test('svc start --regions with a real region is read (the outbound unit\'s instance) and starts', async (t) => {
  const regionsDir = mkdtempSync(join(tmpdir(), 'svc-cli-regions-'));
  t.teardown(() => rmSync(regionsDir, { recursive: true, force: true }));
  const proc = spawn(svcBin, ['start', '--role', 'outbound', '--regions', 'eu-west-1'], {
    env: cleanEnv({ SVC_DATA_DIR: regionsDir, SVC_LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL'); });
  let stdout = '';
  proc.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
  const started = await waitFor('the outbound queues to start', async () => {
    if (proc.exitCode !== null) throw new Error('svc exited');
    return /"msg":"outbound queues started"/.test(stdout) ? stdout : undefined;
  }, 60_000);
  t.match(started, /"regions":\["eu-west-1"\]/, 'only the region asked for');
  proc.kill('SIGTERM');
  await exitWithin('svc to exit after SIGTERM', proc, 30_000);
});

/** Connects to a Unix socket and answers whether Redis there says PONG. */
function redisAnswers(path: string): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = createConnection({ path });
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => { socket.destroy(); resolvePromise(d.toString().startsWith('+PONG')); });
    socket.once('error', () => resolvePromise(false));
    socket.once('timeout', () => { socket.destroy(); resolvePromise(false); });
  });
}

function childPids(pid: number, name: string): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid), name], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

t.test('svc start runs a private Redis, the API and the admin socket; admin commands work; SIGTERM stops it all', async (t) => {
  const httpPort = await freePort();
  const smtpPort = await freePort();
  const env = cleanEnv({ SVC_HTTP_PORT: String(httpPort), SVC_HTTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(smtpPort) });
  const base = `http://127.0.0.1:${httpPort}`;
  const redisSock = join(dataDir, 'redis.sock');
  const adminSock = join(dataDir, 'admin.sock');

  const proc: ChildProcess = spawn(svcBin, ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => proc.once('exit', (code, signal) => res({ code, signal })));
  t.teardown(() => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL'); });

  const health = await waitFor('GET /health', async () => {
    if (proc.exitCode !== null) throw new Error(`svc exited early: ${stderr}`);
    const r = await call(base, 'GET', '/health').catch(() => undefined);
    return r?.status === 200 ? r : undefined;
  }, 60_000).catch((err: Error) => { t.fail(`${err.message}; stderr: ${stderr}; stdout: ${stdout}`); return undefined; });
  if (!health) return;
  t.equal(health.status, 200);
  t.equal(health.body.status, 'ok');

  // Its own redis-server, a child of svc, on <data>/redis.sock.
  t.ok(existsSync(redisSock), 'redis.sock exists in the data folder');
  t.ok(await redisAnswers(redisSock), 'the private Redis answers PING on its socket');
  const redisPids = childPids(proc.pid!, 'redis-server');
  t.equal(redisPids.length, 1, 'exactly one redis-server child of svc');

  // The admin socket: owner-only.
  t.ok(existsSync(adminSock), 'admin.sock exists');
  t.ok(statSync(adminSock).isSocket(), 'admin.sock is a socket');
  t.equal(statSync(adminSock).mode & 0o777, 0o600, 'admin.sock has mode 0600');

  // The operator's first team and key, through the real CLI.
  const team = await svc(['admin', 'team', 'create', 'Acme'], env);
  t.equal(team.code, 0, team.stderr + team.stdout);
  const teamId = /^team ([0-9a-f-]{36}) "Acme" created$/m.exec(team.stdout)?.[1];
  t.ok(teamId, `the team id is printed: ${team.stdout}`);

  const key = await svc(['admin', 'key', 'create', '--team', 'Acme', '--name', 'first'], env);
  t.equal(key.code, 0, key.stderr + key.stdout);
  const tokens = lines(key.stdout).filter((l) => l.startsWith('svc_'));
  t.equal(tokens.length, 1, 'the token is printed exactly once');
  const token = tokens[0]!;
  t.equal(key.stdout.split(token).length - 1, 1, 'the token appears once in the whole output');
  const keyId = /^key ([0-9a-f-]{36}) created for team ([0-9a-f-]{36})/m.exec(key.stdout);
  t.ok(keyId, key.stdout);
  t.equal(keyId?.[2], teamId, 'the key belongs to Acme');

  const listed = await call(base, 'GET', '/api-keys', { token });
  t.equal(listed.status, 200, JSON.stringify(listed.body));
  t.same(listed.body.data.map((k: { id: string }) => k.id), [keyId?.[1]], 'the token works over HTTP and sees its own key');
  t.equal(listed.body.data[0]?.name, 'first');
  const noKey = await call(base, 'GET', '/api-keys', { token: 'svc_not-a-real-token' });
  t.equal(noKey.status, 401, 'a made-up token does not');

  const [list, status, refused] = await Promise.all([
    svc(['admin', 'key', 'list'], env),
    svc(['admin', 'status'], env),
    svc(['admin', 'key', 'create', '--team', 'Nobody', '--name', 'x'], env),
  ]);
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, keyId?.[1] ?? 'no key id', 'key list shows the key id');
  t.match(list.stdout, /active\s+full_access.*first/);
  t.notMatch(list.stdout, /svc_/, 'key list never shows a token');
  t.notMatch(list.stdout, token);

  t.equal(status.code, 0, status.stderr + status.stdout);
  const parsed = JSON.parse(status.stdout) as { object: string; readiness: { status: string; failed: unknown[] }; pid: number; data_dir: string; roles: string[]; processes: unknown[] };
  t.equal(parsed.object, 'status');
  t.same(parsed.roles, ['api', 'inbound', 'outbound', 'jobs'], 'every role this process runs, not only the api');
  t.match(parsed.processes, [{ pid: proc.pid, roles: ['api', 'inbound', 'outbound', 'jobs'], regions: ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'], private_redis: true, this_process: true }]);
  t.equal(parsed.processes.length, 1, 'one process on the folder');
  t.equal(parsed.readiness.status, 'ok');
  t.same(parsed.readiness.failed, []);
  t.equal(parsed.pid, proc.pid, 'status comes from the running svc');
  t.equal(parsed.data_dir, dataDir);

  t.equal(refused.code, 1, 'an admin error exits 1');
  t.match(refused.stdout, /error: not_found/);

  // SIGTERM: a clean exit within a few seconds, and the private Redis goes with it.
  const stopStarted = Date.now();
  proc.kill('SIGTERM');
  const result = await withDeadline('svc to exit after SIGTERM', exited, 30_000).catch(() => undefined);
  t.ok(result, 'svc exits within 30 s of SIGTERM');
  t.same(result, { code: 0, signal: null }, `exit code 0 (stderr: ${stderr})`);
  t.ok(Date.now() - stopStarted < 30_000);
  for (const pid of redisPids) t.notOk(isAlive(pid), `redis-server ${pid} is gone`);
  t.notOk(await redisAnswers(redisSock), 'nothing answers on redis.sock any more');
  t.equal(stderr, '', 'nothing on stderr during the whole run');
});

t.test('svc killed with -9 takes its private Redis with it', async (t) => {
  const killedDir = mkdtempSync(join(tmpdir(), 'svc-cli-kill9-'));
  t.teardown(() => rmSync(killedDir, { recursive: true, force: true }));
  const httpPort = await freePort();
  const env = cleanEnv({ SVC_DATA_DIR: killedDir, SVC_HTTP_PORT: String(httpPort), SVC_HTTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(await freePort()) });
  const proc = spawn(svcBin, ['start', '--role', 'api'], { env, stdio: 'ignore' });
  t.teardown(() => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL'); });
  await waitFor('GET /health', async () => ((await call(`http://127.0.0.1:${httpPort}`, 'GET', '/health').catch(() => undefined))?.status === 200 ? true : undefined), 60_000);
  const [redisPid] = childPids(proc.pid!, 'redis-server');
  t.ok(redisPid, 'svc runs its private redis-server');
  proc.kill('SIGKILL');
  await exitWithin('svc to exit after SIGKILL', proc);
  const stopped = await waitFor('the private redis-server to stop', async () => (isAlive(redisPid!) ? undefined : true), 10_000).then(() => true, () => false);
  t.ok(stopped, 'no redis-server outlives svc');
});
