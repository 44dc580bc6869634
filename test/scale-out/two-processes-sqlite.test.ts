import t from 'tap';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { exitWithin } from '../helpers/deadline.js';
import { startScaleRig, type NodeSettings } from '../helpers/scale-out-rig.js';
import { twoNodesKilledTwice } from '../helpers/scale-out-scenario.js';

// Several outbound processes on one box and one SQLite file (issue #18, "or a Redis lease where
// SQLite serves"): with outbound_processes 2, two `bin/svc start --role outbound` processes run
// on one data folder — each in one of the region's two places — and share its queue as nodes
// on PostgreSQL do, while one is killed with kill -9 twice (test/helpers/scale-out-scenario.ts
// says what must hold). A third process finds both places taken and says so.
t.setTimeout(170_000);

// Both processes share one box, so a stall starves them alike: a shorter lease than on PostgreSQL's
// separate nodes keeps node b's recipients from all going to node a while b is down.
const settings: NodeSettings = { concurrency: 10, perDomainConnections: 8, leaseS: 6 };

t.test('two outbound processes on one SQLite folder, kill -9 twice: every message delivered once, none lost', async (t) => {
  const rig = await startScaleRig({ engine: 'sqlite', places: 2 });
  t.teardown(() => rig.stop());
  await twoNodesKilledTwice(t, rig, { messages: 6000, settings });

  // Both places held (b was started again after its second kill): a third is refused, whole.
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin', SVC_MAIL_HOSTNAME: 'mta.svc-test.net',
    SVC_DATA_DIR: rig.app.config.data_dir, SVC_REDIS_URL: rig.redis.url, SVC_OUTBOUND_PROCESSES: '2',
  };
  const third = spawn(join(resolve(import.meta.dirname, '../../..'), 'bin', 'svc'), ['start', '--role', 'outbound'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  third.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  try {
    await exitWithin('the third outbound process to give up', third, 30_000);
  } finally {
    third.kill('SIGKILL');
  }
  t.equal(third.exitCode, 1, 'a third outbound process exits 1');
  t.match(stderr, /already runs the outbound role for us-east-1 there \(all 2 places of outbound_processes are taken\)/, `and names the full places: ${stderr.trim()}`);
});
