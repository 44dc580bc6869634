import t from 'tap';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { testClock } from '../helpers/test-clock.js';
import { exitWithin, withDeadline } from '../helpers/deadline.js';

// Two processes accept mail for one team on one SQLite file at the same moment: together they
// must not pass the team's daily cap by a single recipient.
const at = '2026-05-10T08:00:00.000Z';
const plans = JSON.stringify([{ code: 'capped', name: 'Capped', limits: { daily_cap: 60 } }]);
const app = await startTestAppliance({ clock: testClock(new Date(at)), env: { SVC_PLANS: plans } });
t.teardown(() => app.stop());
const team = await app.newTeam('Racing');
await app.appliance.services.api.foundation.teams.setPlan(team.teamId, 'capped');
const domain = 'racing.net';
fakeSendingDomains(app).add({ teamId: team.teamId, name: domain });

const child = spawn(process.execPath, [join(import.meta.dirname, '../helpers/team-send-child.js'), app.config.data_dir, app.redis.url, plans, team.teamId, domain, at], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
t.teardown(async () => {
  child.stdin.end();
  await exitWithin('the second appliance to stop', child, 30_000).catch(() => child.kill('SIGKILL'));
});
const otherBase = await withDeadline('the second appliance to listen', new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); if (out.includes('\n')) resolve(out.trim()); });
  child.on('exit', (code) => reject(new Error(`the second appliance exited (${code}) before listening`)));
}), 60_000);

t.test('40 sends of 2 recipients at once, half to each process, against a cap of 60: exactly 30 pass', async (t) => {
  const bases = [app.baseUrl, otherBase];
  const sends = Array.from({ length: 40 }, (_, i) => call(bases[i % 2]!, 'POST', '/emails', {
    token: team.token,
    body: { from: `hi@${domain}`, to: [`delivered+${i}a@simulator.svc.invalid`, `delivered+${i}b@simulator.svc.invalid`], subject: `Race ${i}`, text: 'x' },
  }).then((r) => ({ process: i % 2, status: r.status, name: r.body?.name as string | undefined })));
  const answers = await Promise.all(sends);
  const accepted = answers.filter((a) => a.status === 200);
  t.equal(accepted.length, 30, '30 sends of 2 recipients fill the cap of 60 exactly');
  t.same(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.name]), Array(10).fill([429, 'daily_quota_exceeded']), 'the other 10 are refused, nothing else');
  t.ok(accepted.some((a) => a.process === 1), 'the second process accepted some (one process alone could not reach the cap)');
  const db = app.appliance.services.database.db;
  const counter = await db.selectFrom('team_usage').select('emails').where('team_id', '=', team.teamId).where('period', '=', 'd:2026-05-10').executeTakeFirst();
  t.equal(counter?.emails, 60, 'the day\'s counter stands at the cap');
  const stored = await db.selectFrom('email_recipients').select((eb) => eb.fn.countAll<number>().as('n')).where('team_id', '=', team.teamId).executeTakeFirstOrThrow();
  t.equal(Number(stored.n), 60, 'exactly 60 recipients were accepted across both processes');
});
