import t from 'tap';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { startTestAppliance } from './helpers/appliance.js';
import { call } from './helpers/http.js';
import { adminCall } from '../bin/admin-client.js';
import { listenSocket } from '../api/server.js';

const app = await startTestAppliance();
t.teardown(() => app.stop());
const socket = app.adminSocket;

/** A raw request on the admin socket: exact body text, no User-Agent unless given. */
function rawAdmin(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('the admin socket is owner-only (mode 0600) and lives in the data folder', async (t) => {
  t.equal(socket, join(app.config.data_dir, 'admin.sock'));
  const st = statSync(socket);
  t.ok(st.isSocket());
  t.equal(st.mode & 0o777, 0o600);
  t.equal(st.uid, process.getuid!(), 'owned by the user running svc');
});

t.test('listenSocket makes the socket 0600 whatever the umask, restores the umask, and replaces a stale file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'admin.sock');
  writeFileSync(path, 'left over from a crash');
  const before = process.umask(0o000);
  try {
    const server = await listenSocket(express().get('/ping', (_req, res) => { res.json({ pong: true }); }), path);
    t.teardown(() => server.close());
    t.equal(process.umask(), 0o000, 'the umask is put back as it was');
    t.ok(statSync(path).isSocket(), 'the stale file was replaced by the socket');
    t.equal(statSync(path).mode & 0o777, 0o600);
    const answer = await adminCall(path, 'GET', '/ping');
    t.same(answer, { status: 200, body: { pong: true } });
  } finally {
    process.umask(before);
  }
});

t.test('the operator needs no API key on the socket: status answers with readiness', async (t) => {
  const r = await adminCall(socket, 'GET', '/admin/status');
  t.equal(r.status, 200);
  t.match(r.body, { object: 'status', version: 'test', env: 'production', pid: process.pid, roles: ['api'], data_dir: app.config.data_dir });
  t.match(r.body, { readiness: { status: 'ok', failed: [] } });
  t.match(r.body, { processes: [{ pid: process.pid, roles: ['api'], regions: [], version: 'test', private_redis: false, this_process: true }] });
  t.equal((r.body as { processes: unknown[] }).processes.length, 1, 'the one process on this data folder');
  t.type((r.body as { uptime_s: number }).uptime_s, 'number');
});

t.test('POST /admin/teams without a name is 422 missing_required_field', async (t) => {
  for (const body of [{}, undefined]) {
    const r = await adminCall(socket, 'POST', '/admin/teams', body);
    t.equal(r.status, 422, JSON.stringify(body));
    t.match(r.body, { statusCode: 422, name: 'missing_required_field', errors: [{ path: 'name' }] });
    t.type((r.body as { message: string }).message, 'string');
  }
  const blank = await adminCall(socket, 'POST', '/admin/teams', { name: '  ' });
  t.equal(blank.status, 422);
  t.equal((blank.body as { name: string }).name, 'validation_error');
  const list = await adminCall(socket, 'GET', '/admin/teams');
  t.same((list.body as { data: unknown[] }).data, [], 'no team was created by the refused calls');
});

t.test('POST /admin/teams creates a team; it is listed', async (t) => {
  const r = await adminCall(socket, 'POST', '/admin/teams', { name: 'Socket Team' });
  t.equal(r.status, 201);
  t.match(r.body, { object: 'team', id: /^[0-9a-f-]{36}$/, name: 'Socket Team', status: 'active' });
  const list = await adminCall(socket, 'GET', '/admin/teams');
  t.ok((list.body as { data: { id: string }[] }).data.some((team) => team.id === (r.body as { id: string }).id));
});

t.test('POST /admin/api-keys with an unknown team is 404 not_found; without a team 422', async (t) => {
  for (const team of ['No Such Team', randomUUID()]) {
    const r = await adminCall(socket, 'POST', '/admin/api-keys', { team, name: 'k' });
    t.equal(r.status, 404, team);
    t.match(r.body, { statusCode: 404, name: 'not_found' });
  }
  const missing = await adminCall(socket, 'POST', '/admin/api-keys', { name: 'k' });
  t.equal(missing.status, 422);
  t.match(missing.body, { name: 'missing_required_field', errors: [{ path: 'team' }] });
  const malformed = await rawAdmin('POST', '/admin/api-keys', '{"team": ', { 'content-type': 'application/json' });
  t.equal(malformed.status, 400, 'malformed JSON is refused');
  t.equal(malformed.body.name, 'validation_error');
});

t.test('an operator may grant inbox_access read on the socket; an API key may not', async (t) => {
  const team = (await adminCall(socket, 'POST', '/admin/teams', { name: 'Inbox Team' })).body as { id: string };
  const created = await adminCall(socket, 'POST', '/admin/api-keys', { team: team.id, name: 'reader', inbox_access: 'read', permission: 'full_access' });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const key = created.body as { id: string; token: string; team_id: string };
  t.equal(key.team_id, team.id);
  t.match(key.token, /^svc_/);

  const listed = await adminCall(socket, 'GET', `/admin/api-keys?team=${team.id}`);
  t.equal(listed.status, 200);
  const rows = (listed.body as { data: Record<string, unknown>[] }).data;
  t.equal(rows.length, 1);
  t.match(rows[0], { id: key.id, name: 'reader', inbox_access: 'read', status: 'active' });
  t.notOk('token' in rows[0]!, 'a listed key carries no token');
  t.notOk('token_hash' in rows[0]!);

  // The key works over HTTP, and the same grant through the public API is refused.
  const own = await call(app.baseUrl, 'GET', '/api-keys', { token: key.token });
  t.equal(own.status, 200);
  const viaApi = await call(app.baseUrl, 'POST', '/api-keys', { token: key.token, body: { name: 'escalate', inbox_access: 'read' } });
  t.equal(viaApi.status, 403);
  t.equal(viaApi.body.name, 'invalid_permission');
});

t.test('the admin routes are not reachable on the public TCP port', async (t) => {
  const { token } = await app.newTeam('Public');
  const teamsBefore = ((await adminCall(socket, 'GET', '/admin/teams')).body as { data: unknown[] }).data.length;
  for (const [method, path, body] of [
    ['GET', '/admin/status', undefined],
    ['GET', '/admin/teams', undefined],
    ['POST', '/admin/teams', { name: 'Sneaky' }],
    ['POST', '/admin/api-keys', { team: 'Public', name: 'x' }],
    ['GET', '/api/v1/admin/status', undefined],
  ] as const) {
    for (const auth of [undefined, token]) {
      const r = await call(app.baseUrl, method, path, { token: auth, body });
      t.equal(r.status, 404, `${method} ${path} ${auth ? 'with' : 'without'} a key`);
      t.equal(r.body.name, 'not_found');
    }
  }
  const teamsAfter = ((await adminCall(socket, 'GET', '/admin/teams')).body as { data: unknown[] }).data.length;
  t.equal(teamsAfter, teamsBefore, 'no team was created over TCP');
});

t.test('the socket also serves the public API, still behind API keys', async (t) => {
  const r = await rawAdmin('GET', '/api-keys', undefined, { 'user-agent': 'svc-tests/1.0' });
  t.equal(r.status, 401);
  t.equal(r.body.name, 'missing_api_key');
  const health = await rawAdmin('GET', '/health');
  t.equal(health.status, 200);
});

t.test('adminCall names the socket when nothing listens there', async (t) => {
  const path = join(app.config.data_dir, 'nobody.sock');
  t.notOk(existsSync(path));
  await t.rejects(adminCall(path, 'GET', '/admin/status'), { message: /no svc is listening on .*nobody\.sock/ });
});
