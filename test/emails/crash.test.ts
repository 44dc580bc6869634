import t from 'tap';
import { runCrashRig } from '../helpers/crash-rig.js';

// kill -9 during delivery, at least 10 times, restarting each time (bench/send-throughput runs
// the same rig with 2,000 emails).
t.test('kill -9 during delivery: every accepted email delivered exactly once or failed with a reason', async (t) => {
  const result = await runCrashRig({ emails: 500, kills: 10, replyDelayMs: 30, concurrency: 5, log: (line) => t.comment(line) });
  t.comment(JSON.stringify(result));
  t.equal(result.kills, 10);
  t.same(result.duplicates, [], 'no Message-ID reached the MX twice');
  t.same(result.other, {}, 'nothing left queued, submitting or ambiguous');
  const failed = result.failed.reduce((n, f) => n + f.count, 0);
  t.equal(result.delivered + failed, result.accepted, 'none lost');
  t.ok(result.failed.every((f) => f.reason === 'ambiguous_submission'), 'every failure has its reason');
  t.equal(result.deliveredNotAtMx, 0, 'every email svc calls delivered was taken by the MX exactly once');
  t.equal(result.atMxNotRecorded, 0);
  t.ok(result.delivered > 0);
});
