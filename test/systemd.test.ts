import t from 'tap';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { accessSync, constants, existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { schema, envName } from '../config/schema.js';
import { exitWithin, waitFor } from './helpers/deadline.js';

// Runs scripts/install.sh into temp folders (as `make install` would into /opt/svc) and checks the
// units it installs. Compiled to dist/test/, so the project is two folders up.
const execFileAsync = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'svc-install-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
const prefix = join(tmp, 'opt/svc');
// Units under a fake root's /etc/systemd/system, so `systemctl --root` can enable them below.
const sysRoot = join(tmp, 'root');
const unitDir = join(sysRoot, 'etc/systemd/system');
const etcDir = join(tmp, 'etc/svc');

const roleUnits = { api: 'svc-api.service', inbound: 'svc-inbound.service', outbound: 'svc-outbound@.service', jobs: 'svc-jobs.service' };
const allUnits = ['svc.target', 'svc-redis.service', ...Object.values(roleUnits)];

// The test never creates users and never copies the 400 MB of runtime/ and node_modules/.
const installEnv = { ...process.env, SVC_INSTALL_NO_USER: '1', SVC_INSTALL_LINK: '1', SVC_INSTALL_ETC_DIR: etcDir };
const install = (target = prefix) =>
  spawnSync('bash', [join(root, 'scripts/install.sh'), target, unitDir], { env: installEnv, encoding: 'utf8' });

const first = install();
t.equal(first.status, 0, 'install.sh succeeds');
if (first.status !== 0) throw new Error(`install.sh failed: ${first.stderr}`);

type Unit = Map<string, string[]>; // "Section.Key" → every value, in order
function readUnit(name: string): Unit {
  const unit: Unit = new Map();
  let section = '';
  for (const raw of readFileSync(join(unitDir, name), 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    if (line.startsWith('[')) { section = line.slice(1, -1); continue; }
    const eq = line.indexOf('=');
    const key = `${section}.${line.slice(0, eq)}`;
    unit.set(key, [...(unit.get(key) ?? []), line.slice(eq + 1)]);
  }
  return unit;
}
const one = (unit: Unit, key: string) => unit.get(key)?.at(-1);
const units = new Map(allUnits.filter((name) => existsSync(join(unitDir, name))).map((name) => [name, readUnit(name)]));

t.test('every unit is installed', async (t) => {
  for (const name of allUnits) t.ok(units.has(name), name);
});

t.test('only svc-inbound may bind port 25; nobody else holds a capability', async (t) => {
  for (const [name, unit] of units) {
    if (name === 'svc.target') continue;
    const bounding = one(unit, 'Service.CapabilityBoundingSet');
    if (name === roleUnits.inbound) {
      t.equal(bounding, 'CAP_NET_BIND_SERVICE', `${name} bounding set`);
      t.equal(one(unit, 'Service.AmbientCapabilities'), 'CAP_NET_BIND_SERVICE', `${name} ambient`);
    } else {
      t.equal(bounding, '', `${name} has an empty bounding set`);
      t.notOk(readFileSync(join(unitDir, name), 'utf8').includes('CAP_NET_BIND_SERVICE'), `${name} never names CAP_NET_BIND_SERVICE`);
    }
  }
});

t.test('no unit sets MemoryDenyWriteExecute (V8 would crash)', async (t) => {
  for (const [name, unit] of units) t.notOk(unit.has('Service.MemoryDenyWriteExecute'), name);
});

t.test('every role unit is hardened, runs as svc and shares one Redis', async (t) => {
  for (const [role, name] of Object.entries(roleUnits)) {
    const unit = units.get(name)!;
    const expect: Record<string, string> = {
      'Service.NoNewPrivileges': 'yes', 'Service.ProtectSystem': 'strict', 'Service.StateDirectory': 'svc',
      'Service.RuntimeDirectory': 'svc', 'Service.RuntimeDirectoryPreserve': 'yes', 'Service.User': 'svc',
      'Service.Group': 'svc', 'Service.Restart': 'on-failure', 'Service.TimeoutStopSec': '30', 'Service.UMask': '0027',
      'Service.RestrictAddressFamilies': 'AF_UNIX AF_INET AF_INET6', 'Unit.PartOf': 'svc.target',
      'Unit.Requires': 'svc-redis.service', 'Install.WantedBy': 'svc.target',
    };
    for (const [key, value] of Object.entries(expect)) t.equal(one(unit, key), value, `${name} ${key}`);
    t.match(one(unit, 'Unit.After'), /\bsvc-redis\.service\b/, `${name} starts after Redis`);
    t.equal(one(unit, 'Service.ExecStart'), `${prefix}/bin/svc start --role ${role}${role === 'outbound' ? ' --regions %i' : ''}`, `${name} runs the installed svc`);
    const env = unit.get('Service.Environment') ?? [];
    t.ok(env.includes('SVC_DATA_DIR=/var/lib/svc'), `${name} keeps data in the state dir`);
    t.ok(env.includes('SVC_REDIS_URL=unix:///run/svc/redis.sock'), `${name} uses the shared Redis`);
    t.equal(env.some((e) => e.startsWith('SVC_ADMIN_SOCKET=')), role === 'api', `${name}: only the api owns the admin socket`);
    t.equal(one(unit, 'Service.EnvironmentFile'), `-${etcDir}/svc.env`, `${name} reads the optional site file`);
  }
  const redis = units.get('svc-redis.service')!;
  t.equal(one(redis, 'Service.User'), 'svc');
  t.match(one(redis, 'Service.ExecStart'), /--unixsocket \/run\/svc\/redis\.sock .*--save "" --appendonly no/);
});

t.test('the installed svc accepts the environment each role unit gives it', async (t) => {
  accessSync(join(prefix, 'bin/svc'), constants.X_OK);
  // In parallel: loading svc takes over a second each time.
  await Promise.all(Object.values(roleUnits).map(async (name) => {
    // Only PATH from outside: an SVC_ variable that is not a config key would stop start-up.
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    for (const quoted of units.get(name)!.get('Service.Environment') ?? []) {
      const e = quoted.replace(/^"(.*)"$/, '$1');
      env[e.slice(0, e.indexOf('='))] = e.slice(e.indexOf('=') + 1);
    }
    const run = await execFileAsync(join(prefix, 'bin/svc'), ['config', 'print'], { env }).catch((err: { stderr?: string }) => ({ stdout: '', stderr: err.stderr ?? String(err) }));
    t.equal(run.stderr, '', `${name} starts without a config error`);
    t.match(run.stdout, /data_dir = "\/var\/lib\/svc"/, name);
  }));
});

t.test('the example site file is all comments and names only real keys', async (t) => {
  const text = readFileSync(join(etcDir, 'svc.env'), 'utf8');
  const keys = new Set([...Object.keys(schema).map(envName), 'SVC_CONFIG']);
  t.notOk(text.split('\n').some((l) => l.trim() && !l.trim().startsWith('#')), 'nothing is set by default');
  for (const [, name] of text.matchAll(/^#(SVC_[A-Z0-9_]+)=/gm)) t.ok(keys.has(name!), name);
  t.match(first.stdout, /systemctl enable --now svc\.target/, 'prints the next steps');
});

t.test('running install again keeps the site file and the units', async (t) => {
  writeFileSync(join(etcDir, 'svc.env'), 'SVC_HTTP_PORT=8080\n');
  const again = install();
  t.equal(again.status, 0, again.stderr);
  t.equal(readFileSync(join(etcDir, 'svc.env'), 'utf8'), 'SVC_HTTP_PORT=8080\n');
  t.ok(lstatSync(join(prefix, 'node_modules')).isSymbolicLink());
  t.equal(readlinkSync(join(prefix, 'runtime')), join(root, 'runtime'));
  t.notOk(existsSync(join(prefix, 'dist/test')), 'compiled tests are not installed');
});

t.test('svc run by hand on an installed tree reads the units\' settings and the site file', async (t) => {
  const siteFile = join(etcDir, 'svc.env');
  const kept = readFileSync(siteFile, 'utf8');
  t.teardown(() => writeFileSync(siteFile, kept));
  const layout = readFileSync(join(prefix, 'layout.env'), 'utf8');
  t.match(layout, /^SVC_DATA_DIR=\/var\/lib\/svc$/m, 'layout.env carries the units\' data folder');
  t.match(layout, /^SVC_ADMIN_SOCKET=\/run\/svc\/admin\.sock$/m, 'and the admin socket');
  t.match(layout, new RegExp(`^ENVIRONMENT_FILE=${siteFile}$`, 'm'), 'and names the site file');
  const byHand = (args: string[], env: Record<string, string> = {}) =>
    execFileAsync(join(prefix, 'bin/svc'), args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } })
      .then((r) => ({ code: 0, ...r }), (err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' }));

  writeFileSync(siteFile, 'SVC_HTTP_PORT=8080\nSVC_LOG_LEVEL=warn\n');
  const [plain, shellWins, named, status] = await Promise.all([
    byHand(['config', 'print']),
    byHand(['config', 'print'], { SVC_HTTP_PORT: '9090' }),
    byHand(['config', 'print'], { SVC_DATA_DIR: join(tmp, 'elsewhere') }),
    byHand(['admin', 'status']),
  ]);
  t.equal(plain.code, 0, plain.stderr);
  t.match(plain.stdout, /^data_dir = "\/var\/lib\/svc"$/m, 'the units\' data folder, not ./data');
  t.match(plain.stdout, /^admin_socket = "\/run\/svc\/admin\.sock"$/m, 'the units\' admin socket');
  t.match(plain.stdout, /^http_port = 8080$/m, 'the site file\'s value');
  t.match(plain.stdout, /^log_level = "warn"$/m);
  t.match(plain.stdout, new RegExp(`^# read from ${join(prefix, 'layout.env')}, then ${siteFile}, then the environment`), 'says where it read them');
  t.match(shellWins.stdout, /^http_port = 9090$/m, 'the shell\'s own setting wins');
  t.match(shellWins.stdout, /^data_dir = "\/var\/lib\/svc"$/m);
  t.match(named.stdout, new RegExp(`^data_dir = "${join(tmp, 'elsewhere')}"$`, 'm'), 'SVC_DATA_DIR in the shell: the layout is not read');
  t.match(named.stdout, /^http_port = 3000$/m, 'nor the site file');
  t.notMatch(named.stdout, /^# read from/m);
  t.equal(status.code, 1);
  t.match(status.stderr, /^svc: no svc is listening on \/run\/svc\/admin\.sock/, 'svc admin looks for the units\' socket');

  writeFileSync(siteFile, 'SVC_HTTP_PORTT=1\n');
  const typo = await byHand(['config', 'print']);
  t.equal(typo.code, 1, 'a bad site file stops svc by hand as it stops the units');
  t.match(typo.stderr, /^config: SVC_HTTP_PORTT: unknown setting/);
});

t.test('svc admin by hand finds a running installed svc through the site file', async (t) => {
  const siteFile = join(etcDir, 'svc.env');
  const kept = readFileSync(siteFile, 'utf8');
  t.teardown(() => writeFileSync(siteFile, kept));
  const dataDir = join(tmp, 'var-lib-svc');
  const socket = join(tmp, 'run-svc-admin.sock');
  // Site values win over the units' lines, as under systemd: a folder and socket of the test's
  // own, and a private Redis instead of svc-redis.service.
  writeFileSync(siteFile, [`SVC_DATA_DIR=${dataDir}`, `SVC_ADMIN_SOCKET=${socket}`, 'SVC_REDIS_URL=', 'SVC_HTTP_PORT=0', 'SVC_SMTP_PORT=0',
    'SVC_SMTP_HOST=127.0.0.1', 'SVC_MAIL_HOSTNAME=mx.installed-test.net', 'SVC_LOG_LEVEL=warn', ''].join('\n'));
  const proc = spawn(join(prefix, 'bin/svc'), ['start', '--role', 'api'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL'); });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  await waitFor('the installed svc to open its admin socket', async () => {
    if (proc.exitCode !== null) throw new Error(`svc exited: ${stderr}`);
    return existsSync(socket) ? true : undefined;
  }, 60_000);
  const status = await execFileAsync(join(prefix, 'bin/svc'), ['admin', 'status'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  const body = JSON.parse(status.stdout) as { pid: number; data_dir: string; roles: string[] };
  t.equal(body.pid, proc.pid, 'answered by the running svc, found with no setting given');
  t.equal(body.data_dir, dataDir);
  proc.kill('SIGTERM');
  await exitWithin('the installed svc to stop', proc, 30_000);
  t.equal(proc.exitCode, 0, stderr);
});

t.test('a path systemd would misread is refused', async (t) => {
  const bad = install(join(tmp, 'with space'));
  t.not(bad.status, 0);
  t.match(bad.stderr, /unsupported path/);
});

const hasTool = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;

// verify exits 0 on warnings (unknown keys, bad values), so any line naming our units fails too.
// It does not look up User=, so the missing svc user is no concern. Lines about units that are not
// ours (a minimal container without network.target, say) are outside our control: only reported.
t.test('systemd-analyze verify accepts the installed units', { skip: !hasTool('systemd-analyze') && 'no systemd-analyze here' }, async (t) => {
  const paths = allUnits.map((name) => join(unitDir, name.replace('@.', '@all.')));
  const run = spawnSync('systemd-analyze', ['verify', '--man=no', ...paths], { encoding: 'utf8' });
  const lines = `${run.stdout}${run.stderr}`.split('\n').filter(Boolean);
  const ours = lines.filter((line) => /svc/.test(line));
  for (const line of lines.filter((l) => !ours.includes(l))) t.comment(`verify (not ours): ${line}`);
  t.equal(run.status, 0, 'exit code');
  t.same(ours, [], 'no complaint about our units');
});

t.test('every role unit is Type=notify with a watchdog and the sandbox systemd-analyze security asks for', async (t) => {
  for (const name of Object.values(roleUnits)) {
    const unit = units.get(name)!;
    t.equal(one(unit, 'Service.Type'), 'notify', `${name}: READY=1 once listening`);
    t.equal(one(unit, 'Service.NotifyAccess'), 'all', `${name}: systemd-notify, a child, may send`);
    t.equal(one(unit, 'Service.WatchdogSec'), '30s', name);
    t.same(unit.get('Service.SystemCallFilter'), ['@system-service', '~@privileged @resources'], name);
    t.equal(one(unit, 'Service.SystemCallErrorNumber'), 'EPERM', `${name}: a refused call fails, it does not kill`);
    for (const [key, value] of [['ProtectProc', 'invisible'], ['ProcSubset', 'pid'], ['RemoveIPC', 'yes'], ['PrivateMounts', 'yes']]) {
      t.equal(one(unit, `Service.${key}`), value, `${name}: ${key}`);
    }
    t.equal(one(unit, 'Service.PrivateUsers'), name === roleUnits.inbound ? undefined : 'yes',
      `${name}: PrivateUsers${name === roleUnits.inbound ? ' off: a capability in a user namespace cannot bind port 25' : ''}`);
    t.notOk(unit.has('Service.MemoryDenyWriteExecute'), `${name}: V8's JIT needs W+X memory`);
  }
});

t.test('enabling svc.target enables every role', { skip: !hasTool('systemctl') && 'no systemctl here' }, async (t) => {
  const run = spawnSync('systemctl', [`--root=${sysRoot}`, 'enable', 'svc.target'], { encoding: 'utf8' });
  t.equal(run.status, 0, 'systemctl enable');
  // The links point inside the fake root (/etc/systemd/system/…), so they are read, not followed.
  const wants = join(unitDir, 'svc.target.wants');
  for (const name of ['svc-redis.service', 'svc-api.service', 'svc-inbound.service', 'svc-jobs.service', 'svc-outbound@all.service']) {
    const link = join(wants, name);
    t.equal(existsSync(wants) && lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() && readlinkSync(link),
      `/etc/systemd/system/${name.replace('@all.', '@.')}`, `${name} is wanted by svc.target`);
  }
});
