import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// bin/svc gives node the V8 settings of bin/node-flags, except one that NODE_OPTIONS sets too: on
// node's command line it would win, and svc-jobs.service's own young-generation size would not
// apply. A module preloaded through NODE_OPTIONS prints what node was started with and exits
// before svc does anything.
const root = fileURLToPath(new URL('../../', import.meta.url));
const svcBin = join(root, 'bin', 'svc');
const tmp = mkdtempSync(join(tmpdir(), 'svc-flags-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
const probe = join(tmp, 'probe.cjs');
writeFileSync(probe, 'process.stdout.write(JSON.stringify({ execArgv: process.execArgv }));\nprocess.exit(0);\n');

function startedWith(nodeOptions: string): { execArgv: string[] } {
  const run = spawnSync(svcBin, ['--version'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_OPTIONS: `${nodeOptions} --require ${probe}`.trim() }, encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`bin/svc failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as { execArgv: string[] };
}

const unitOptions = /^Environment="?NODE_OPTIONS=([^"\n]*)"?$/m.exec(readFileSync(join(root, 'systemd', 'svc-jobs.service'), 'utf8'))?.[1] ?? '';

t.test('without NODE_OPTIONS of its own, every flag of bin/node-flags is given', async (t) => {
  const { execArgv } = startedWith('');
  t.ok(execArgv.includes('--max-semi-space-size=16'), JSON.stringify(execArgv));
  t.ok(execArgv.includes('--heap-growing-percent=50'));
});

t.test('the jobs unit\'s NODE_OPTIONS keep their own young-generation size', async (t) => {
  t.match(unitOptions, /--max-semi-space-size=8/, 'the unit sets it');
  const { execArgv } = startedWith(unitOptions);
  t.notOk(execArgv.some((a) => a.startsWith('--max-semi-space-size')), `the command line leaves it to NODE_OPTIONS: ${JSON.stringify(execArgv)}`);
  t.ok(execArgv.includes('--heap-growing-percent=50'), 'the other flags are still given');
});
