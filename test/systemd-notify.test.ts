import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exitWithin, waitFor } from './helpers/deadline.js';
import { freePort } from './helpers/ports.js';

// Type=notify as systemd sees it: `svc start` with NOTIFY_SOCKET set sends READY=1 only once the
// API answers, WATCHDOG=1 at half of WATCHDOG_USEC, and STOPPING=1 on SIGTERM — each through the
// machine's real systemd-notify, to a datagram socket standing in for PID 1's (a Python listener:
// node cannot bind one). Receiving without ancillary space drops the BARRIER=1 descriptor, which
// is what ends systemd-notify's wait, as PID 1 closing it would.
t.setTimeout(90_000);
const hasTool = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const root = fileURLToPath(new URL('../../', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'svc-notify-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

const listenerScript = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("listening", flush=True)
while True:
    data = s.recv(65536)
    print(data.decode().replace("\\n", " | "), flush=True)
`;

t.test('READY=1 after the API listens, WATCHDOG=1 pings, STOPPING=1 on SIGTERM',
  { skip: !(hasTool('systemd-notify') && hasTool('python3')) && 'no systemd-notify or python3 here' }, async (t) => {
    const notifySocket = join(tmp, 'notify.sock');
    const listener = spawn('python3', ['-c', listenerScript, notifySocket], { stdio: ['ignore', 'pipe', 'inherit'] });
    t.teardown(() => { listener.kill('SIGKILL'); });
    const messages: { text: string; healthy: boolean }[] = [];
    const port = await freePort();
    const health = () => fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
    let pending = '';
    listener.stdout!.on('data', (c: Buffer) => {
      pending += c.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      // Whether the API answers is asked the moment each message arrives.
      for (const text of lines) void health().then((healthy) => messages.push({ text, healthy }));
    });
    await waitFor('the notify listener', async () => messages.some((m) => m.text === 'listening'));

    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin', NOTIFY_SOCKET: notifySocket, WATCHDOG_USEC: '400000',
      SVC_DATA_DIR: join(tmp, 'data'), SVC_REDIS_URL: '', SVC_HTTP_HOST: '127.0.0.1', SVC_HTTP_PORT: String(port),
      SVC_MAIL_HOSTNAME: 'mx.notify-test.net', SVC_LOG_LEVEL: 'warn', SVC_SCANNER_CLAMD: '',
    };
    const svc = spawn(join(root, 'bin/svc'), ['start', '--role', 'api'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    t.teardown(() => { if (svc.exitCode === null && svc.signalCode === null) svc.kill('SIGKILL'); });
    let stderr = '';
    svc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
    const ready = await waitFor('READY=1', async () => {
      if (svc.exitCode !== null) throw new Error(`svc exited: ${stderr}`);
      return messages.find((m) => m.text.startsWith('READY=1'));
    }, 60_000);
    t.equal(ready.text, 'READY=1 | STATUS=serving api');
    t.ok(ready.healthy, 'the API answered when READY=1 arrived');
    await waitFor('two watchdog pings', async () => messages.filter((m) => m.text === 'WATCHDOG=1').length >= 2 || undefined, 10_000);
    const first = messages.findIndex((m) => m.text.startsWith('READY=1'));
    const ping = messages.findIndex((m) => m.text === 'WATCHDOG=1');
    t.ok(first < ping, 'the pings begin after READY=1');
    svc.kill('SIGTERM');
    await exitWithin('svc to stop', svc, 30_000);
    t.equal(svc.exitCode, 0, stderr);
    t.ok(messages.some((m) => m.text === 'STOPPING=1'), 'STOPPING=1 on SIGTERM');
    t.notMatch(stderr, /systemd-notify failed/);
  });

t.test('without NOTIFY_SOCKET nothing is sent and nothing fails', async (t) => {
  const { systemdNotifier } = await import('../bin/systemd-notify.js');
  const lines: unknown[] = [];
  const logger = { info: (...a: unknown[]) => lines.push(a), error: (...a: unknown[]) => lines.push(a) } as never;
  const notifier = systemdNotifier({ env: { WATCHDOG_USEC: '1000' }, pid: 1, logger, command: '/nonexistent/systemd-notify' });
  t.equal(notifier.enabled, false);
  await notifier.ready('serving api');
  notifier.startWatchdog();
  await notifier.stopping();
  notifier.close();
  t.same(lines, [], 'no spawn, no log');
});

t.test('a sender that fails is logged once, not at every ping', async (t) => {
  const { systemdNotifier } = await import('../bin/systemd-notify.js');
  const errors: unknown[] = [];
  const logger = { info: () => undefined, error: (...a: unknown[]) => errors.push(a) } as never;
  const notifier = systemdNotifier({ env: { NOTIFY_SOCKET: join(tmp, 'none.sock') }, pid: 1, logger, command: '/bin/false' });
  await notifier.ready('serving api');
  await notifier.stopping();
  t.equal(errors.length, 1);
  t.match(errors[0], [{ problem: 'exit code 1' }, /systemd-notify failed/]);
});
