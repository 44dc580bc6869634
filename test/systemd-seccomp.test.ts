import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adminCall } from '../bin/admin-client.js';
import { exitWithin, waitFor } from './helpers/deadline.js';
import { call } from './helpers/http.js';
import { freePort } from './helpers/ports.js';
import { startTestRedis } from './helpers/redis.js';

// svc under the units' system call filter: every role starts in one process, takes a
// team, a key and a send to the mailbox simulator, and stops cleanly. The filter is the units'
// own — SystemCallFilter=@system-service, then ~@privileged @resources, EPERM for the rest — with
// each set expanded by `systemd-analyze syscall-filter` and loaded with libseccomp (through
// Python's ctypes: no systemd runs here as PID 1) before svc is exec'd.
t.setTimeout(120_000);
const root = fileURLToPath(new URL('../../', import.meta.url));
const hasTool = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const libseccomp = ['/usr/lib/x86_64-linux-gnu/libseccomp.so.2', '/usr/lib/aarch64-linux-gnu/libseccomp.so.2', '/lib/x86_64-linux-gnu/libseccomp.so.2']
  .find((p) => existsSync(p));
const skip = !(hasTool('systemd-analyze') && hasTool('python3') && libseccomp) && 'no systemd-analyze, python3 or libseccomp here';

/** A set's system calls, nested sets expanded, as systemd-analyze lists them. */
function expand(set: string, seen = new Set<string>()): Set<string> {
  const names = new Set<string>();
  if (seen.has(set)) return names;
  seen.add(set);
  const out = spawnSync('systemd-analyze', ['syscall-filter', set], { encoding: 'utf8' }).stdout;
  for (const raw of out.split('\n').slice(1)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (line.startsWith('@')) for (const n of expand(line, seen)) names.add(n);
    else names.add(line);
  }
  return names;
}

const loader = `
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1])
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
ctx = lib.seccomp_init(ctypes.c_uint32(0x00050000 | 1))  # SCMP_ACT_ERRNO(EPERM)
allowed = 0
for name in sys.argv[2].split(","):
    nr = lib.seccomp_syscall_resolve_name(name.encode())
    if nr < 0:
        continue
    if lib.seccomp_rule_add(ctx, 0x7fff0000, nr, 0) == 0:
        allowed += 1
if lib.seccomp_load(ctx) != 0:
    sys.exit("seccomp_load failed")
print(f"filter loaded: {allowed} system calls allowed", file=sys.stderr, flush=True)
os.execv(sys.argv[3], sys.argv[3:])
`;

t.test('every role works under SystemCallFilter=@system-service ~@privileged @resources', { skip }, async (t) => {
  const denied = new Set([...expand('@privileged'), ...expand('@resources')]);
  const allowed = [...expand('@system-service')].filter((n) => !denied.has(n));
  t.ok(allowed.includes('epoll_wait') && !allowed.includes('setuid') && !allowed.includes('setrlimit'), 'the filter is the units\' one');
  const control = spawnSync('python3', ['-c', loader, libseccomp!, allowed.join(','), '/usr/bin/nice', '-n', '5', 'true'], { encoding: 'utf8' });
  t.match(control.stderr, /Operation not permitted/, 'the filter bites: setpriority (@resources) is refused');
  const tmp = mkdtempSync(join(tmpdir(), 'svc-seccomp-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const port = await freePort();
  // Redis outside the filter, as svc-redis.service is a unit of its own.
  const redis = await startTestRedis();
  t.teardown(() => redis.stop());
  const socket = join(tmp, 'admin.sock');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin', SVC_DATA_DIR: join(tmp, 'data'), SVC_REDIS_URL: redis.url, SVC_ADMIN_SOCKET: socket,
    SVC_HTTP_HOST: '127.0.0.1', SVC_HTTP_PORT: String(port), SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: '0',
    SVC_MAIL_HOSTNAME: 'mx.seccomp-test.net', SVC_LOG_LEVEL: 'warn', SVC_SCANNER_CLAMD: '',
  };
  const svc = spawn('python3', ['-c', loader, libseccomp!, allowed.join(','), join(root, 'bin/svc'), 'start'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => { if (svc.exitCode === null && svc.signalCode === null) svc.kill('SIGKILL'); });
  let stderr = '';
  svc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  await waitFor('svc under the filter to answer', async () => {
    if (svc.exitCode !== null) throw new Error(`svc exited ${svc.exitCode}: ${stderr}`);
    return fetch(`http://127.0.0.1:${port}/ready`).then((r) => r.ok || undefined, () => undefined);
  }, 60_000);
  t.match(stderr, /filter loaded: \d+ system calls allowed/);
  const team = await adminCall(socket, 'POST', '/admin/teams', { name: 'Filtered' });
  const key = await adminCall(socket, 'POST', '/admin/api-keys', { team: 'Filtered', name: 'k' });
  t.equal(team.status, 201);
  const token = (key.body as { token: string }).token;
  const sent = await call(`http://127.0.0.1:${port}`, 'POST', '/emails', {
    token, body: { from: 'onboarding@simulator.svc.invalid', to: 'delivered@simulator.svc.invalid', subject: 'Filtered', text: 'hi' },
  });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  await waitFor('delivered under the filter', async () => {
    const got = await call(`http://127.0.0.1:${port}`, 'GET', `/emails/${sent.body.id}`, { token });
    return got.body.last_event === 'delivered' || undefined;
  });
  svc.kill('SIGTERM');
  await exitWithin('svc to stop', svc, 30_000);
  t.equal(svc.exitCode, 0, stderr);
});
