import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestAppliance } from '../helpers/appliance.js';
import { call, type CallResult } from '../helpers/http.js';
import { runSvcCommand, type SvcRun } from '../helpers/svc-command.js';

// A leaked key held the team's bucket at zero; the operator revokes it with the real executable
// (bin/svc → the carried Node → dist/bin/svc.js) on the running appliance's admin socket.
const logLines: Record<string, unknown>[] = [];
const app = await startTestAppliance({
  // A small bucket that refills slowly: a handful of requests keeps it empty.
  env: { SVC_RATE_LIMIT_BURST: '3', SVC_RATE_LIMIT_PER_SECOND: '1', SVC_LOG_LEVEL: 'info' },
  logDestination: { write: (line) => { logLines.push(JSON.parse(line) as Record<string, unknown>); } },
});
t.teardown(() => app.stop());

/** `svc admin …` to completion, killed after 30 s so a hang fails the test instead of the file. */
function svcAdmin(args: string[]): Promise<SvcRun> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_DATA_DIR: app.config.data_dir };
  return runSvcCommand(['admin', ...args], env, 30_000);
}

const lines = (text: string) => text.split('\n').filter((l) => l.length > 0);

t.test('a leaked key that empties the bucket is revoked by svc admin key revoke; its next request is 403', async (t) => {
  const team = await app.newTeam('Leaky');
  const other = await app.appliance.services.api.foundation.apiKeys.create(team.teamId, { name: 'the good one' }, { kind: 'operator' });
  const leaked = team.token;
  t.equal((await call(app.baseUrl, 'GET', '/api-keys', { token: leaked })).status, 200, 'the key works (and is now in the key cache)');

  // The abuser: four loops of requests until told to stop (or 30 s pass), keeping the bucket empty.
  const seen: number[] = [];
  let stop = false;
  const deadline = Date.now() + 30_000;
  const abuse = Promise.all(Array.from({ length: 4 }, async () => {
    while (!stop && Date.now() < deadline) seen.push((await call(app.baseUrl, 'GET', '/api-keys?limit=1', { token: leaked })).status);
  }));
  while (!seen.includes(429) && Date.now() < deadline) await sleep(5);
  t.ok(seen.includes(429), 'the abuser empties the team\'s bucket');
  const throttled = await call(app.baseUrl, 'DELETE', `/api-keys/${team.keyId}`, { token: other.token });
  t.equal(throttled.status, 429, 'the team cannot revoke the key through the API while it is abused');
  t.equal(throttled.body.name, 'rate_limit_exceeded');

  const listed = await svcAdmin(['key', 'list', '--team', team.teamId]);
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, new RegExp(`^${team.keyId}\\s+active\\b`, 'm'), 'key list --team shows the key id');

  // The leak report shows the token: its first 20 characters are enough.
  const revoked = await svcAdmin(['key', 'revoke', leaked.slice(0, 20)]);
  t.equal(revoked.code, 0, revoked.stderr + revoked.stdout);
  t.same(lines(revoked.stdout), [`key ${team.keyId} "Leaky key" of team ${team.teamId} revoked`], 'one line');
  t.equal(revoked.stderr, '');

  const next = await call(app.baseUrl, 'GET', '/api-keys', { token: leaked });
  t.equal(next.status, 403, 'the very next request with the key is refused');
  t.match(next.body, { statusCode: 403, name: 'restricted_api_key' });
  stop = true;
  await abuse;
  t.equal(seen.at(-1), 403, 'the abuser is refused after the revocation');

  // A revoked key spends nothing: the bucket refills for the team's other key.
  let after: CallResult | undefined;
  for (const end = Date.now() + 10_000; Date.now() < end && after?.status !== 200; await sleep(250)) {
    after = await call(app.baseUrl, 'GET', '/api-keys?status=all', { token: other.token });
  }
  t.equal(after?.status, 200, 'the team\'s other key works again');
  t.match(after?.body.data.find((k: { id: string }) => k.id === team.keyId), { status: 'revoked' });

  const logged = logLines.filter((l) => l.msg === 'api key revoked by the operator');
  t.equal(logged.length, 1, 'one log line');
  t.match(logged[0], { level: 30, apiKeyId: team.keyId, teamId: team.teamId });
  t.notOk(JSON.stringify(logLines).includes(leaked.slice(4, 20)), 'no log line carries the token or its public id');
});

t.test('revoke by id, the whole token, again (idempotent); refusals name the problem', async (t) => {
  const team = await app.newTeam('Tidy');
  const second = await app.appliance.services.api.foundation.apiKeys.create(team.teamId, { name: 'second' }, { kind: 'operator' });

  const byId = await svcAdmin(['key', 'revoke', team.keyId]);
  t.equal(byId.code, 0, byId.stderr + byId.stdout);
  t.same(lines(byId.stdout), [`key ${team.keyId} "Tidy key" of team ${team.teamId} revoked`]);
  const again = await svcAdmin(['key', 'revoke', team.token]);
  t.equal(again.code, 0);
  t.same(lines(again.stdout), [`key ${team.keyId} "Tidy key" of team ${team.teamId} was already revoked`]);
  t.equal((await call(app.baseUrl, 'GET', '/api-keys', { token: team.token })).status, 403);
  t.equal((await call(app.baseUrl, 'GET', '/api-keys', { token: second.token })).status, 200, 'the team\'s other key is untouched');

  const [unknown, short, missing] = await Promise.all([
    svcAdmin(['key', 'revoke', '0192c4e2-0000-7000-8000-000000000000']),
    svcAdmin(['key', 'revoke', second.token.slice(0, 12)]),
    svcAdmin(['key', 'revoke']),
  ]);
  t.equal(unknown.code, 1);
  t.match(unknown.stdout, /^error: not_found: API key not found$/m);
  t.equal(short.code, 1, 'a prefix shorter than the public id names nothing');
  t.match(short.stdout, /^error: validation_error: .*first 20 characters/m);
  t.equal(missing.code, 2, 'a usage error');
  t.match(missing.stderr, /^svc admin key revoke: KEY_ID\|TOKEN is needed/);
  t.equal((await call(app.baseUrl, 'GET', '/api-keys', { token: second.token })).status, 200, 'no refused call revoked anything');
});
