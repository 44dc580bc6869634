import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `systemd-analyze security --offline=yes` on every installed unit (installed by scripts/install.sh
// into temp folders, as test/systemd.test.ts does): exposure at most 4.5 each. Skipped where
// systemd-analyze is missing or too old for --offline (systemd < 250).
const MAX_EXPOSURE = 4.5;
const root = fileURLToPath(new URL('../../../', import.meta.url));
const help = spawnSync('systemd-analyze', ['--help'], { encoding: 'utf8' });
const offline = help.status === 0 && help.stdout.includes('--offline');

t.test('every unit scores an exposure of at most 4.5', { skip: !offline && 'no systemd-analyze with --offline here' }, async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-security-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const unitDir = join(tmp, 'units');
  const install = spawnSync('bash', [join(root, 'scripts/install.sh'), join(tmp, 'opt/svc'), unitDir], {
    env: { ...process.env, SVC_INSTALL_NO_USER: '1', SVC_INSTALL_LINK: '1', SVC_INSTALL_ETC_DIR: join(tmp, 'etc') }, encoding: 'utf8',
  });
  t.equal(install.status, 0, install.stderr);
  const units = ['svc-api.service', 'svc-inbound.service', 'svc-outbound@all.service', 'svc-jobs.service', 'svc-redis.service'];
  for (const unit of units) {
    const run = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', join(unitDir, unit)], { encoding: 'utf8' });
    const line = /Overall exposure level for \S+: ([\d.]+)/.exec(run.stdout)?.[1];
    t.ok(line, `${unit}: an exposure figure (${run.stderr.trim().slice(0, 200)})`);
    const exposure = Number(line);
    t.comment(`${unit}: exposure ${exposure}`);
    t.ok(exposure <= MAX_EXPOSURE, `${unit}: ${exposure} <= ${MAX_EXPOSURE}`);
  }
});
