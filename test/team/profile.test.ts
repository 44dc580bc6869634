import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { testClock } from '../helpers/test-clock.js';
import { runAdmin } from '../../bin/admin-commands.js';
import { isCountryCode, planCatalog, sendAllowance, teamService } from '../../core/team/index.js';
import { regionDirectory } from '../../core/regions.js';
import { pino } from 'pino';

// GET /team, PATCH /team (every field and rule), GET /team/members, the permission matrix of the
// team routes for API keys, and the operator's `svc admin member` commands.
const clock = testClock(new Date('2026-04-01T10:00:00.000Z'));
const app = await startTestAppliance({ clock });
t.teardown(() => app.stop());
const base = app.baseUrl;
const db = app.appliance.services.database.db;

async function admin(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runAdmin(app.adminSocket, args, (line) => lines.push(line));
  return { code, lines };
}

const patch = (token: string, body: unknown) => call(base, 'PATCH', '/team', { token, body });
const validKit = {
  logo_url: 'https://cdn.example.com/logo.png', primary_color: '#1A2B3C', accent_color: '#ffffff', font: 'georgia',
  button_style: 'pill', company_name: 'Acme Ltd', address: '1 Main St, Springfield', footer_text: 'You get this because you asked.',
};

t.test('GET /team answers the team object with its defaults', async (t) => {
  const { token, teamId } = await app.newTeam('  Acme Mail  ');
  const r = await call(base, 'GET', '/team', { token });
  t.equal(r.status, 200);
  t.same(r.body, {
    object: 'team', id: teamId, name: 'Acme Mail', slug: 'acme-mail', created_at: '2026-04-01T10:00:00.000Z', risk_state: 'normal',
    plan: { code: 'default', name: 'Default', limits: { included_emails: null, daily_cap: null, domain_limit: null, webhook_endpoint_limit: null, retention_days: null } },
    sender_identity: { sender_name: null, postal_address: null },
    ai_assist_enabled: false, audience_from_sends: true,
    brand_kit: { logo_url: null, primary_color: '#111827', accent_color: '#2563eb', font: 'system', button_style: 'rounded', company_name: null, address: null, footer_text: null },
    sending: { sandbox_regions: [], tier: 0, tier_name: 'new', next_unlock: 'verify_domain' },
    sso: null,
  });
  const again = await app.newTeam('Acme Mail');
  t.equal((await call(base, 'GET', '/team', { token: again.token })).body.slug, 'acme-mail-2', 'a slug taken gets a number');
  t.equal((await call(base, 'GET', '/api/v1/team', { token })).status, 200, 'also under /api/v1');
});

t.test('the team routes refuse a sending_access key (401 restricted_api_key) and need a key', async (t) => {
  const { token } = await app.newTeam('Restricted', 'sending_access');
  for (const [method, path, body] of [['GET', '/team'], ['PATCH', '/team', { name: 'X' }], ['GET', '/team/members']] as const) {
    const r = await call(base, method, path, { token, body });
    t.equal(r.status, 401, `${method} ${path}`);
    t.equal(r.body.name, 'restricted_api_key', `${method} ${path}`);
  }
  const none = await call(base, 'GET', '/team');
  t.equal(none.status, 401);
  t.equal(none.body.name, 'missing_api_key');
});

t.test('PATCH needs at least one known field', async (t) => {
  const { token } = await app.newTeam('Empty patch');
  const empty = await patch(token, {});
  t.equal(empty.status, 422);
  t.equal(empty.body.name, 'validation_error');
  const unknown = await patch(token, { slug: 'mine' });
  t.equal(unknown.status, 400, 'the slug cannot be set');
  t.equal(unknown.body.name, 'validation_error');
  t.same(unknown.body.errors, [{ path: 'slug', message: 'unknown field `slug`' }]);
});

t.test('name: trimmed, one line, 1-80 characters; the slug stays', async (t) => {
  const { token } = await app.newTeam('Old name');
  const r = await patch(token, { name: '  New name  ' });
  t.equal(r.status, 200);
  t.equal(r.body.name, 'New name');
  t.equal(r.body.slug, 'old-name', 'a rename keeps the slug');
  const eighty = '🙂'.repeat(80);
  t.equal((await patch(token, { name: eighty })).body.name, eighty, '80 characters (not bytes) pass');
  for (const name of ['', '   ', 'x'.repeat(81), 'two\nlines', 'tab\there']) {
    const bad = await patch(token, { name });
    t.equal(bad.status, 422, JSON.stringify(name));
    t.equal(bad.body.name, 'validation_error', JSON.stringify(name));
    t.equal(bad.body.errors[0].path, 'name');
  }
  t.equal((await patch(token, { name: 42 })).status, 400, 'a number is not a name');
  t.equal((await call(base, 'GET', '/team', { token })).body.name, eighty, 'refusals changed nothing');
});

t.test('sender_name needs a postal address; the address is checked line by line and by country', async (t) => {
  const { token } = await app.newTeam('Sender');
  const alone = await patch(token, { sender_name: 'Acme News' });
  t.equal(alone.status, 422, 'refused alone while the team has no postal address');
  t.equal(alone.body.name, 'validation_error');
  t.equal(alone.body.errors[0].path, 'sender_name');
  const address = { line1: '1 Main St', city: 'Berlin', postal_code: '10115', country: 'DE' };
  const together = await patch(token, { sender_name: 'Acme News', postal_address: address });
  t.equal(together.status, 200);
  t.same(together.body.sender_identity, { sender_name: 'Acme News', postal_address: { line1: '1 Main St', line2: null, city: 'Berlin', state: null, postal_code: '10115', country: 'DE' } });
  t.equal((await patch(token, { sender_name: 'Acme Weekly' })).body.sender_identity.sender_name, 'Acme Weekly', 'alone once an address is on file');
  t.equal((await patch(token, { sender_name: 'x'.repeat(200) })).status, 200, '200 characters pass');
  for (const sender_name of ['x'.repeat(201), 'a\r\nBcc: x@example.com']) {
    const bad = await patch(token, { sender_name });
    t.equal(bad.status, 422, JSON.stringify(sender_name).slice(0, 30));
    t.equal(bad.body.name, 'validation_error');
  }
  t.equal((await patch(token, { sender_name: null })).body.sender_identity.sender_name, null, 'null clears it');
  for (const country of ['de', 'UK', 'EU', 'XK', 'ZZ', 'SU', 'Germany', 'D']) {
    const bad = await patch(token, { postal_address: { ...address, country } });
    t.equal(bad.status, 422, country);
    t.equal(bad.body.errors[0].path, 'postal_address.country', country);
  }
  const missing = await patch(token, { postal_address: { city: 'Berlin', country: 'DE' } });
  t.equal(missing.status, 422);
  t.equal(missing.body.name, 'missing_required_field');
  t.equal(missing.body.errors[0].path, 'postal_address.line1');
  const twoLines = await patch(token, { postal_address: { ...address, line2: 'c/o\nsomeone' } });
  t.equal(twoLines.status, 422);
  t.equal(twoLines.body.errors[0].path, 'postal_address.line2');
  t.equal((await patch(token, { postal_address: { ...address, extra: 'x' } })).status, 400, 'unknown address fields are refused');
  const gb = await patch(token, { postal_address: { line1: '10 Downing St', line2: 'Westminster', city: 'London', state: null, postal_code: 'SW1A 2AA', country: 'GB' } });
  t.equal(gb.body.sender_identity.postal_address.country, 'GB');
});

t.test('country codes: every current ISO 3166-1 alpha-2 code, and nothing else', async (t) => {
  let count = 0;
  for (let a = 65; a <= 90; a++) for (let b = 65; b <= 90; b++) if (isCountryCode(String.fromCharCode(a, b))) count++;
  t.equal(count, 249, 'ISO 3166-1 assigns 249 alpha-2 codes');
  for (const code of ['US', 'DE', 'JP', 'AQ', 'SS', 'CW', 'SX', 'BQ']) t.ok(isCountryCode(code), code);
});

t.test('ai_assist_enabled: true is 503 while no AI provider is configured; nothing else of the call is written', async (t) => {
  const { token } = await app.newTeam('AI');
  const on = await patch(token, { ai_assist_enabled: true, name: 'Renamed' });
  t.equal(on.status, 503);
  t.equal(on.body.name, 'service_unavailable');
  t.match(on.body.message, /not configured/);
  const after = await call(base, 'GET', '/team', { token });
  t.equal(after.body.name, 'AI', 'the rename in the refused call was not written');
  t.equal(after.body.ai_assist_enabled, false);
  t.equal((await patch(token, { ai_assist_enabled: false })).status, 200);
  t.equal((await patch(token, { ai_assist_enabled: 'yes' })).status, 400);
});

t.test('ai_assist_enabled: true is kept where a provider is configured', async (t) => {
  const { token, teamId } = await app.newTeam('AI configured');
  const plans = planCatalog([]);
  const service = teamService({
    db, clock, logger: pino({ level: 'silent' }), plans, regions: regionDirectory('test.invalid', {}), aiConfigured: true, allowance: sendAllowance(plans),
    linkBase: () => base,
  });
  const view = await service.update({ kind: 'api_key', teamId, apiKeyId: 'k', permission: 'full_access', domainId: null }, { ai_assist_enabled: true });
  t.equal(view.ai_assist_enabled, true);
  t.equal((await call(base, 'GET', '/team', { token })).body.ai_assist_enabled, true);
});

t.test('renaming needs a team admin: an OAuth token is 403 invalid_permission on `name` whatever its scopes', async (t) => {
  const { teamId } = await app.newTeam('OAuth rename');
  const token = { kind: 'oauth_token' as const, teamId, apiKeyId: null, domainId: null, tokenId: 't', scopes: ['team:read', 'team:write'] };
  const service = app.appliance.services.api.audience.team;
  const renamed = await service.update(token, { name: 'Taken over' }).then(() => undefined, (err: unknown) => err);
  t.match(renamed, { statusCode: 403, errorName: 'invalid_permission' });
  t.equal((await service.update(token, { sender_name: null })).name, 'OAuth rename', 'other fields are fine with team:write');
});

t.test('audience_from_sends defaults to true; turning it off is stored', async (t) => {
  const { token } = await app.newTeam('Audience');
  t.equal((await patch(token, { audience_from_sends: true })).body.audience_from_sends, true);
  const off = await patch(token, { audience_from_sends: false });
  t.equal(off.status, 200);
  t.equal(off.body.audience_from_sends, false);
  t.equal((await call(base, 'GET', '/team', { token })).body.audience_from_sends, false);
  t.equal((await patch(token, { audience_from_sends: 1 })).status, 400);
});

t.test('brand_kit: sent whole, every field checked, null resets', async (t) => {
  const { token } = await app.newTeam('Brand');
  const r = await patch(token, { brand_kit: validKit });
  t.equal(r.status, 200);
  t.same(r.body.brand_kit, { ...validKit, primary_color: '#1a2b3c' });
  const { footer_text: _dropped, ...partial } = validKit;
  const missing = await patch(token, { brand_kit: partial });
  t.equal(missing.status, 422, 'every field is required');
  t.equal(missing.body.name, 'missing_required_field');
  const refusals: [string, unknown][] = [
    ['logo_url', 'http://cdn.example.com/logo.png'], ['logo_url', 'https://user:pw@cdn.example.com/x.png'], ['logo_url', 'not a url'],
    ['logo_url', 'javascript:alert(1)'], ['primary_color', '#abc'], ['primary_color', '1a2b3c'], ['accent_color', '#GGGGGG'],
    ['font', 'comic-sans'], ['button_style', 'round'], ['company_name', 'two\nlines'], ['address', 'x'.repeat(201)], ['footer_text', 'a\u2028b'],
  ];
  for (const [field, value] of refusals) {
    const bad = await patch(token, { brand_kit: { ...validKit, [field]: value } });
    // Labels leave the value out: a raw U+2028 would break the TAP stream's lines.
    t.equal(bad.status, 422, `${field} refusal ${refusals.findIndex(([f, v]) => f === field && v === value)}`);
    t.equal(bad.body.errors?.[0]?.path, `brand_kit.${field}`);
  }
  t.equal((await patch(token, { brand_kit: { ...validKit, font: 3 } })).status, 400, 'a number is not a font');
  t.same((await call(base, 'GET', '/team', { token })).body.brand_kit.font, 'georgia', 'refusals changed nothing');
  const reset = await patch(token, { brand_kit: { ...validKit, logo_url: null, font: null } });
  t.equal(reset.body.brand_kit.logo_url, null);
  t.equal(reset.body.brand_kit.font, 'system', 'null returns a field to its default');
  t.equal(reset.body.brand_kit.button_style, 'pill');
  const all = await patch(token, { brand_kit: null });
  t.same(all.body.brand_kit, { logo_url: null, primary_color: '#111827', accent_color: '#2563eb', font: 'system', button_style: 'rounded', company_name: null, address: null, footer_text: null });
});

t.test('a call with one bad field writes none of its fields', async (t) => {
  const { token } = await app.newTeam('Atomic');
  const r = await patch(token, { name: 'Changed', brand_kit: { ...validKit, primary_color: 'red' } });
  t.equal(r.status, 422);
  t.equal((await call(base, 'GET', '/team', { token })).body.name, 'Atomic');
});

t.test('members: added, listed and removed by the operator; listed to a full_access key', async (t) => {
  const { token } = await app.newTeam('Members');
  const empty = await call(base, 'GET', '/team/members', { token });
  t.same(empty.body, { object: 'list', has_more: false, data: [] });
  const added = await admin('member', 'add', 'Members', 'Ann@Example.com', '--name', 'Ann', '--role', 'admin');
  t.equal(added.code, 0);
  t.match(added.lines[0], /added to team Members/);
  t.equal((await admin('member', 'add', 'Members', 'ann@example.com')).lines[0]!.includes('was already in'), true, 'the same address (any case) is one member');
  t.equal((await admin('member', 'add', 'Members', 'bob@example.com')).code, 0);
  const bad = await admin('member', 'add', 'Members', 'not-an-address');
  t.equal(bad.code, 1);
  t.match(bad.lines[0], /validation_error/);
  await t.rejects(admin('member', 'add', 'Members', 'cat@example.com', '--role', 'owner'), /--role: unknown value "owner"; one of admin, member/, 'an unknown role is a usage error');
  const list = await call(base, 'GET', '/team/members', { token });
  t.equal(list.status, 200);
  t.same(list.body.data.map((m: { email: string; role: string; name: string | null }) => [m.email, m.role, m.name]), [['bob@example.com', 'member', null], ['Ann@Example.com', 'admin', 'Ann']]);
  t.match(list.body.data[0], { object: 'team_member', created_at: '2026-04-01T10:00:00.000Z' });
  const page = await call(base, 'GET', '/team/members?limit=1', { token });
  t.equal(page.body.has_more, true);
  t.equal((await call(base, 'GET', '/team/members?limit=0', { token })).status, 422);
  const other = await app.newTeam('Other members');
  t.same((await call(base, 'GET', '/team/members', { token: other.token })).body.data, [], "another team's members are not listed");
  const listed = await admin('member', 'list', 'Members');
  t.equal(listed.lines.length, 2);
  t.equal((await admin('member', 'remove', 'Members', 'ANN@example.com')).code, 0);
  t.equal((await admin('member', 'remove', 'Members', 'ann@example.com')).code, 1, 'already gone: not found');
  t.same((await call(base, 'GET', '/team/members', { token })).body.data.map((m: { email: string }) => m.email), ['bob@example.com']);
});
