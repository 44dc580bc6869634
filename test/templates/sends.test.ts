import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { parseHtml } from '../helpers/html-dom.js';
import { fakeSendingDomains } from '../helpers/sending.js';
import { mailZone } from '../helpers/email-fixtures.js';

// Sending with a template (POST /emails and /emails/batch): the published version rendered with
// the request's variables, escaping as the spec says, fallbacks and every refusal; previews,
// checks and test sends. Rendered HTML is read back with a real HTML parser.
const dns = await mailZone();
const app = await startTestAppliance({ env: { SVC_DNS_SERVERS: dns.address } });
t.teardown(async () => { await app.stop(); await dns.stop(); });
const team = await app.newTeam('Template sender');
fakeSendingDomains(app, dns).add({ teamId: team.teamId, name: 'sender.net' });
dns.set('sender.net', [{ type: 'MX', exchange: 'mx.inbox-one.net', priority: 10 }]);
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });
const stored = async (id: string) => (await api('GET', `/emails/${id}`)).body;
const row = (id: string) => app.appliance.services.database.db.selectFrom('emails').select(['template_id', 'template_version']).where('id', '=', id).executeTakeFirstOrThrow();

const receipt = {
  name: 'Receipt', alias: 'receipt', from: 'Shop <shop@sender.net>', subject: 'Order {{order}} for {{name}}',
  html: '<p id="hi">Hi {{name}}</p><p id="total">{{total}}</p><p id="paid">{{paid}}</p><p id="meta">{{meta}}</p><p id="tags">{{tags}}</p><a id="link" href="https://shop.example/{{order}}">Track</a>',
  text: 'Hi {{name}}, order {{order}} ({{total}}) {{meta}}',
  variables: [
    { key: 'name', type: 'string', fallback_value: 'friend' }, { key: 'order', type: 'string' }, { key: 'total', type: 'number', fallback_value: 0 },
    { key: 'paid', type: 'boolean', fallback_value: false }, { key: 'meta', type: 'object', fallback_value: { a: 1 } }, { key: 'tags', type: 'list', fallback_value: [] },
  ],
};
const id = (await api('POST', '/templates', receipt)).body.id as string;

t.test('a draft template is refused; once published it sends', async (t) => {
  const draft = await api('POST', '/emails', { to: 'ann@inbox-one.net', template: { id, variables: { order: 'A1' } } });
  t.equal(draft.status, 422);
  t.equal(draft.body.name, 'invalid_parameter');
  await api('POST', `/templates/${id}/publish`);
  const sent = await api('POST', '/emails', { to: 'ann@inbox-one.net', template: { id: 'receipt', variables: { order: 'A1' } } });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  const email = await stored(sent.body.id);
  t.equal(email.from, 'Shop <shop@sender.net>', 'the template\'s from');
  t.equal(email.subject, 'Order A1 for friend', 'the fallback fills an omitted key');
  const r = await row(sent.body.id);
  t.equal(r.template_id, id);
  t.equal(r.template_version, (await api('GET', `/templates/${id}`)).body.current_version_id, 'the version used is recorded');
});

t.test('escaping: HTML-escaped in html, raw in subject and text; objects and lists as compact JSON; one pass', async (t) => {
  const name = '<b>Tom & "Jerry"</b> {{order}}';
  const sent = await api('POST', '/emails', {
    to: 'ann@inbox-one.net', subject: 'Own subject {{name}}',
    template: { id, variables: { name, order: 'B<2>', total: 12.5, paid: true, meta: { k: '<v>' }, tags: ['x', 1] } },
  });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  const email = await stored(sent.body.id);
  t.equal(email.subject, 'Own subject {{name}}', 'the request\'s subject wins and is not rendered');
  const doc = await parseHtml(email.html);
  t.equal(doc.getElementById('hi')!.textContent, `Hi ${name}`, 'markup in a value stays text; {{order}} inside it is literal');
  t.equal(doc.querySelectorAll('b').length, 0, 'no element came from a value');
  t.equal(doc.getElementById('total')!.textContent, '12.5');
  t.equal(doc.getElementById('paid')!.textContent, 'true');
  t.equal(doc.getElementById('meta')!.textContent, '{"k":"<v>"}');
  t.equal(doc.getElementById('tags')!.textContent, '["x",1]');
  t.equal(doc.getElementById('link')!.getAttribute('href'), 'https://shop.example/B<2>');
  t.equal(email.text, `Hi ${name}, order B<2> (12.5) {"k":"<v>"}`, 'raw in text');
});

t.test('refusals: type mismatch, no value, unknown key, unknown template, body beside a template, no from', async (t) => {
  const refuse = async (body: Record<string, unknown>, name: string, why: string) => {
    const r = await api('POST', '/emails', { to: 'ann@inbox-one.net', ...body });
    t.equal(r.status, 422, why);
    t.equal(r.body.name, name, `${why}: ${JSON.stringify(r.body)}`);
  };
  await refuse({ template: { id, variables: { order: 5 } } }, 'validation_error', 'a number for a string');
  await refuse({ template: { id, variables: { order: 'x', total: 'ten' } } }, 'validation_error', 'text for a number');
  await refuse({ template: { id, variables: { order: 'x', tags: { not: 'a list' } } } }, 'validation_error', 'an object for a list');
  await refuse({ template: { id } }, 'missing_required_field', 'a declared key with neither value nor fallback');
  await refuse({ template: { id, variables: { order: 'x', nope: 1 } } }, 'validation_error', 'an undeclared key');
  await refuse({ template: { id: 'no-such-template', variables: {} } }, 'validation_error', 'an unknown template');
  await refuse({ template: { id, variables: { order: 'x' } }, html: '<p>x</p>' }, 'validation_error', 'html beside a template');
  const bare = (await api('POST', '/templates', { name: 'Bare', html: '<p>{{x}}</p>', variables: [{ key: 'x', type: 'string', fallback_value: 'y' }] })).body.id;
  await api('POST', `/templates/${bare}/publish`);
  await refuse({ template: { id: bare } }, 'missing_required_field', 'no from anywhere');
  const ok = await api('POST', '/emails', { to: 'ann@inbox-one.net', from: 'a@sender.net', template: { id: bare } });
  t.equal(ok.status, 422, 'no subject anywhere');
  t.equal(ok.body.name, 'missing_required_field');
  const sent = await api('POST', '/emails', { to: 'ann@inbox-one.net', from: 'a@sender.net', subject: 'S', template: { id: bare } });
  t.equal(sent.status, 200);
});

t.test('an edit after publishing does not change sends until the next publish; batch sends', async (t) => {
  await api('PATCH', `/templates/${id}`, { subject: 'New {{order}} {{name}}' });
  const before = await api('POST', '/emails/batch', [
    { to: 'ann@inbox-one.net', template: { id, variables: { order: 'C1' } } },
    { to: 'bob@inbox-two.net', template: { id: 'receipt', variables: { order: 'C2', name: 'Bob' } } },
  ]);
  t.equal(before.status, 200, JSON.stringify(before.body));
  t.same(await Promise.all(before.body.data.map(async (e: { id: string }) => (await stored(e.id)).subject)), ['Order C1 for friend', 'Order C2 for Bob']);
  await api('POST', `/templates/${id}/publish`);
  const after = await api('POST', '/emails', { to: 'ann@inbox-one.net', template: { id, variables: { order: 'C3' } } });
  t.equal((await stored(after.body.id)).subject, 'New C3 friend');
  const strict = await api('POST', '/emails/batch', [{ to: 'ann@inbox-one.net', template: { id } }]);
  t.equal(strict.status, 422);
  t.equal(strict.body.name, 'missing_required_field');
});

t.test('preview, checks and a test send of a draft', async (t) => {
  await api('PATCH', `/templates/${id}`, { html: `${receipt.html}<a href="javascript:alert(1)">x</a><a href="#">y</a><img src="https://x.example/a.png">` });
  const preview = await api('POST', `/templates/${id}/preview`, { variables: { name: 'Ann' } });
  t.equal(preview.status, 200, JSON.stringify(preview.body));
  t.match(preview.body, { object: 'template_preview', template_id: id, subject: 'New  Ann', missing_variables: ['order'] });
  t.match(preview.body.html, /<a href="#">y<\/a>/, 'the current draft is previewed');
  const checks = await api('POST', `/templates/${id}/checks`, { variables: { name: 'Ann' } });
  t.equal(checks.status, 200, JSON.stringify(checks.body));
  const verdict = Object.fromEntries(checks.body.checks.map((c: { name: string; status: string }) => [c.name, c.status]));
  t.same(verdict, {
    links: 'fail', link_types: 'fail', variables: 'fail', subject: 'pass', preview_text: 'warn', alt_text: 'warn', image_weight: 'pass',
    text_and_images: 'warn', unsubscribe: 'warn',
  });
  const test = await api('POST', `/templates/${id}/test`, { to: ['ann@inbox-one.net'], variables: { order: 'T1' } });
  t.equal(test.status, 200, JSON.stringify(test.body));
  t.equal((await stored(test.body.id)).subject, 'New T1 friend', 'the draft is what a test sends');
  const noTo = await api('POST', `/templates/${id}/test`, { variables: { order: 'T1' } });
  t.equal((await api('POST', '/templates/no-such/test', { to: 'ann@inbox-one.net' })).status, 404, 'an unknown template in the path');
  t.equal(noTo.status, 422);
  t.equal(noTo.body.name, 'missing_required_field', 'to is required');
});
