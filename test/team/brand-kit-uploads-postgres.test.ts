import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call, CALL_TIMEOUT_MS } from '../helpers/http.js';
import { jpeg } from '../helpers/images.js';
import { createTestDatabase } from '../helpers/postgres.js';

// Brand kit images on PostgreSQL: the image goes into a bytea column and comes back as the same
// bytes on the public router, and the logo rule finds the team's own upload there too.
const pg = await createTestDatabase();
const app = await startTestAppliance({ databaseUrl: pg.url });
t.teardown(async () => { await app.stop(); await pg.drop(); });

t.test('an upload round-trips through bytea and is accepted as the team\'s logo', async (t) => {
  t.equal(app.appliance.services.database.kind, 'postgres');
  const { token } = await app.newTeam('PG logo');
  const bytes = jpeg(24, 16);
  const r = await call(app.baseUrl, 'POST', '/team/brand-kit/uploads', { token, body: { content: bytes.toString('base64') } });
  t.equal(r.status, 201);
  t.equal(r.body.content_type, 'image/jpeg');
  const res = await fetch(r.body.url, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/jpeg');
  t.ok(Buffer.from(await res.arrayBuffer()).equals(bytes), 'the same bytes');
  const kit = { logo_url: r.body.url, primary_color: null, accent_color: null, font: null, button_style: null, company_name: null, address: null, footer_text: null };
  const patched = await call(app.baseUrl, 'PATCH', '/team', { token, body: { brand_kit: kit } });
  t.equal(patched.status, 200);
  t.equal(patched.body.brand_kit.logo_url, r.body.url);
});
