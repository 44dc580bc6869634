import t from 'tap';
import { randomUUID } from 'node:crypto';
import { runAdmin } from '../../bin/admin-commands.js';
import { pruneRequestLogs } from '../../core/request-logs/retention.js';
import { teamRetentionWindows } from '../../core/team/index.js';
import type { RequestLogRow } from '../../storage/sql/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { testClock } from '../helpers/test-clock.js';

// Records age out on the team's plan's retention window: a plan's `retention_days` replaces the
// config default for its teams (shorter or longer), teams without one keep the default, and moving
// a team to another plan moves its window from the next run.
t.setTimeout(60_000);
const DAY = 86_400_000;
const plans = [
  { code: 'short', name: 'Short', limits: { retention_days: 7 } },
  { code: 'long', name: 'Long', limits: { retention_days: 90 } },
];
const clock = testClock(new Date('2026-06-15T12:00:00.000Z'));
const app = await startTestAppliance({ clock, roles: ['api'], env: { SVC_PLANS: JSON.stringify(plans) } });
t.teardown(() => app.stop());
const { services } = app.appliance;
const windowsOf = teamRetentionWindows(services.database.db, services.plans);
const ages = [1, 10, 40, 100];

async function teamOn(name: string, plan: string | null): Promise<string> {
  const { teamId } = await app.newTeam(name);
  if (plan) t.equal(await runAdmin(app.adminSocket, ['team', 'plan', teamId, plan], () => undefined), 0);
  await services.repos.requestLogs.insertMany(ages.map((days) => logRow(teamId, days)));
  return teamId;
}

function logRow(teamId: string, ageDays: number): RequestLogRow {
  return {
    id: randomUUID(), team_id: teamId, api_key_id: null, created_at: new Date(clock.now().getTime() - ageDays * DAY).toISOString(),
    method: 'GET', endpoint: '/domains', path: `/${ageDays}-days`, response_status: 200, user_agent: 'svc-tests/1.0', source: 'api',
    request_id: randomUUID(), latency_ms: 3, email_id: null, request_body: null, response_body: null,
  };
}

const kept = (teamId: string) => (services.database.sqlite!.prepare('select path from request_logs where team_id = ? order by created_at desc')
  .all(teamId) as { path: string }[]).map((r) => r.path);

t.test('each team keeps its logs for its plan\'s window, else the default', async (t) => {
  const short = await teamOn('Short team', 'short');
  const long = await teamOn('Long team', 'long');
  const plain = await teamOn('Plain team', null);
  const windows = await windowsOf(30);
  t.same(windows.fallbackDays, 30);
  t.same(new Set(windows.teams.map((w) => `${w.teamId}:${w.days}`)), new Set([`${short}:7`, `${long}:90`]));
  t.equal(await pruneRequestLogs(services.repos.requestLogs, clock, windows), 3 + 1 + 2);
  t.same(kept(short), ['/1-days'], 'a 7-day plan');
  t.same(kept(long), ['/1-days', '/10-days', '/40-days'], 'a 90-day plan keeps past the default');
  t.same(kept(plain), ['/1-days', '/10-days'], 'no plan window: the default 30 days');

  t.equal(await runAdmin(app.adminSocket, ['team', 'plan', long, 'short'], () => undefined), 0);
  t.equal(await pruneRequestLogs(services.repos.requestLogs, clock, await windowsOf(30)), 2, 'moved to the short plan');
  t.same(kept(long), ['/1-days']);
});
