import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `systemd-analyze security --offline=yes` on every installed unit (installed by scripts/install.sh
// into temp folders, as test/systemd.test.ts does). 10 is unprotected; up to 2 it says "OK". The
// bar is as good as each role allows: the role units at most 1.5 (they run with a system call
// filter, private users, /proc hidden); inbound 2.0 (it holds CAP_NET_BIND_SERVICE, so no private
// user namespace); redis, Debian's redis-server as is, 4.5. Skipped where systemd-analyze is
// missing or too old for --offline (systemd < 250).
const MAX_EXPOSURE: Record<string, number> = {
  'svc-api.service': 1.5, 'svc-outbound@all.service': 1.5, 'svc-jobs.service': 1.5, 'svc-inbound.service': 2.0, 'svc-redis.service': 4.5,
};
const root = fileURLToPath(new URL('../../../', import.meta.url));
const help = spawnSync('systemd-analyze', ['--help'], { encoding: 'utf8' });
const offline = help.status === 0 && help.stdout.includes('--offline');

t.test('every unit scores an exposure at or under its bar', { skip: !offline && 'no systemd-analyze with --offline here' }, async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-security-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const unitDir = join(tmp, 'units');
  const install = spawnSync('bash', [join(root, 'scripts/install.sh'), join(tmp, 'opt/svc'), unitDir], {
    env: { ...process.env, SVC_INSTALL_NO_USER: '1', SVC_INSTALL_LINK: '1', SVC_INSTALL_ETC_DIR: join(tmp, 'etc') }, encoding: 'utf8',
  });
  t.equal(install.status, 0, install.stderr);
  for (const [unit, bar] of Object.entries(MAX_EXPOSURE)) {
    const run = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', join(unitDir, unit)], { encoding: 'utf8' });
    const [, line, verdict] = /Overall exposure level for \S+: ([\d.]+) (\S+)/.exec(run.stdout) ?? [];
    t.ok(line, `${unit}: an exposure figure (${run.stderr.trim().slice(0, 200)})`);
    const exposure = Number(line);
    t.comment(`${unit}: exposure ${exposure}`);
    t.ok(exposure <= bar, `${unit}: ${exposure} <= ${bar}`);
    if (bar <= 2) t.equal(verdict, 'OK', `${unit}: systemd-analyze calls it OK`);
  }
});
