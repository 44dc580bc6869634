import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { parseHtml } from '../helpers/html-dom.js';
import type { RenderContact } from '../../core/templates/index.js';

// Visual templates: starters, layouts compiled with MJML, brand tokens and overrides, the html
// block's sanitiser, show-when rules decided per contact, repeat groups and formats. Rendered
// output is read back with an HTML parser.
const app = await startTestAppliance();
t.teardown(() => app.stop());
const team = await app.newTeam('Visual');
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token: team.token, body });
const sends = app.appliance.services.api.content.templateSends;

t.test('every starter becomes version 1 and previews with its blocks and the brand', async (t) => {
  for (const starter of ['welcome', 'newsletter', 'promotion', 'abandoned-cart']) {
    const r = await api('POST', '/templates', { name: starter, starter, brand_overrides: { primary_color: '#aa0000', company_name: 'Acme Ltd', logo_url: null } });
    t.equal(r.status, 201, `${starter}: ${JSON.stringify(r.body)}`);
    const got = (await api('GET', `/templates/${r.body.id}`)).body;
    t.match(got, { starter, current_version_number: 1, status: 'draft' });
    t.ok(got.layout.sections.length >= 3, `${starter} has a layout`);
    t.match(got.preview_text, /\w/, `${starter} has a preheader`);
    const preview = (await api('POST', `/templates/${r.body.id}/preview`, { variables: {} })).body;
    const doc = await parseHtml(preview.html);
    t.match(doc.body.textContent, /Acme Ltd/, `${starter}: the company name from the overrides`);
    t.ok(preview.html.includes('color:#aa0000'), `${starter}: the primary colour`);
    t.notOk(preview.html.includes('{{'), `${starter}: no placeholder is left`);
    t.equal([...doc.querySelectorAll('img')].filter((i) => i.getAttribute('src') === '').length, 0, `${starter}: no logo without a logo`);
    t.notMatch(preview.text, /svc:|\{\{/, `${starter}: the text part has no markers or placeholders`);
  }
  const welcome = (await api('POST', '/templates', { name: 'W', starter: 'welcome' })).body.id;
  const preview = (await api('POST', `/templates/${welcome}/preview`, { variables: { first_name: 'Ann <3', cta_url: 'https://acme.example/go?a=1&b=2' } })).body;
  const doc = await parseHtml(preview.html);
  t.ok([...doc.querySelectorAll('h1')].some((h) => h.textContent === 'Welcome aboard, Ann <3!'), 'the heading, escaped and read back');
  t.ok([...doc.querySelectorAll('a')].some((a) => a.getAttribute('href') === 'https://acme.example/go?a=1&b=2' && /Get started/.test(a.textContent ?? '')), 'the button');
  t.equal(preview.subject, 'Welcome, Ann <3');
  t.match(preview.text, /Welcome aboard, Ann <3!/);
});

t.test('the html block is sanitised: scripts, handlers, style sheets, javascript: links and embeds go', async (t) => {
  const hostile = [
    '<p id="keep">Kept <strong>bold</strong> <a href="https://ok.example/">ok link</a></p>',
    '<script>alert(1)</script><style>body{background:url(https://evil.example/x)}</style><link rel="stylesheet" href="https://evil.example/s.css">',
    '<img src="https://img.example/a.png" alt="a" onerror="alert(2)"><a href="javascript:alert(3)">js</a><a href="JaVaScRiPt:alert(4)">js2</a>',
    '<iframe src="https://evil.example/"></iframe><embed src="x.swf"><object data="x"></object><svg onload="alert(5)"><circle r="1"/></svg>',
    '<div style="background:url(javascript:alert(6))">styled</div><form action="https://evil.example/"><input name="q"></form>',
    '<!--svc:if:1-->hidden?<!--svc:end:1--><a href="data:text/html,<script>alert(7)</script>">data</a><meta http-equiv="refresh" content="0">',
  ].join('');
  const r = await api('POST', '/templates', { name: 'Hostile', layout: { sections: [{ columns: [[{ type: 'html', html: hostile }]] }] } });
  t.equal(r.status, 201, JSON.stringify(r.body));
  const html = (await api('GET', `/templates/${r.body.id}`)).body.html as string;
  const block = html.slice(html.indexOf('Kept') - 200);
  for (const bad of [/<script/i, /<style[^>]*>body\{background:url\(https:\/\/evil/i, /<link rel="stylesheet"/i, /onerror/i, /onload/i, /javascript:/i, /<iframe/i, /<embed/i, /<object/i, /<svg/i, /<form/i, /<input/i, /data:text\/html/i, /http-equiv/i, /svc:if:1/]) {
    t.notMatch(block, bad, `removed: ${bad}`);
  }
  const doc = await parseHtml(html);
  t.equal(doc.getElementById('keep')?.textContent, 'Kept bold ok link', 'the harmless markup stays');
  t.ok([...doc.querySelectorAll('a')].some((a) => a.getAttribute('href') === 'https://ok.example/'));
  t.ok([...doc.querySelectorAll('img')].some((i) => i.getAttribute('src') === 'https://img.example/a.png'));
});

t.test('layout refusals', async (t) => {
  const refuse = async (layout: unknown, why: string) => {
    const r = await api('POST', '/templates', { name: 'Bad', layout });
    t.equal(r.status, 422, why);
    t.equal(r.body.name, 'validation_error', `${why}: ${JSON.stringify(r.body)}`);
  };
  await refuse({ sections: [{ columns: [[{ type: 'text', text: 'a' }, { type: 'preheader', text: 'late' }]] }] }, 'a preheader not first');
  await refuse({ sections: [{ columns: [[{ type: 'preheader', text: 'a' }]] }, { columns: [[{ type: 'preheader', text: 'b' }]] }] }, 'two preheaders');
  await refuse({ sections: [{ columns: [[], [], [], []] }] }, 'four columns');
  await refuse({ sections: [{ columns: [[{ type: 'marquee' }]] }] }, 'an unknown block');
  await refuse({ sections: [{ columns: [[{ type: 'button', text: 'Go', href: 'javascript:alert(1)' }]] }] }, 'a code-running button link');
  await refuse({ sections: [{ columns: [[{ type: 'text', text: 'x', show_when: { match: 'some', rules: [] } }]] }] }, 'an unreadable show_when');
  await refuse({ sections: [{ repeat: 'items', columns: [[{ type: 'text', text: '{{{item.title}}}' }]] }] }, 'a repeat not over event data');
});

t.test('show-when per contact, repeat groups of at most 50, formats; POST /emails-style renders show every block', async (t) => {
  const topic = (await api('POST', '/topics', { name: 'Deals', default_subscription: 'opt_in' })).body.id as string;
  const gone = (await api('POST', '/topics', { name: 'Gone', default_subscription: 'opt_in' })).body.id as string;
  const segment = (await api('POST', '/segments', { name: 'VIPs' })).body.id as string;
  const block = (id: string, show_when?: unknown) => ({ type: 'text', text: `@@${id}@@`, show_when });
  const layout = {
    sections: [
      { columns: [[
        block('always'),
        block('pro', { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }] }),
        block('deals', { match: 'all', rules: [{ topic, subscription: 'opt_in' }] }),
        block('vip-or-big', { any: [{ segment }, { event: 'value', op: 'gt', value: 100 }] }),
        block('gone-topic', { any: [{ topic: gone, subscription: 'opt_in' }, { field: 'email', op: 'contains', value: '@' }] }),
        block('named', { all: [{ field: 'first_name', op: 'exists' }] }),
      ]] },
      { repeat: 'event.items', columns: [[{ type: 'text', text: '<{{{item.title}}}> x{{{item.quantity|1}}} = {{{item.price|0|currency:USD}}} on {{{event.at||date:long}}} ({{{item.ratio||number:2}}})' }]] },
      { columns: [[{ type: 'cart' }]] },
    ],
  };
  const id = (await api('POST', '/templates', { name: 'Rules', layout })).body.id as string;
  await api('DELETE', `/topics/${gone}`);
  await api('POST', `/templates/${id}/publish`);
  const preview = (await api('POST', `/templates/${id}/preview`, {})).body;
  const shown = (html: string) => [...html.matchAll(/@@([a-z-]+)@@/g)].map((m) => m[1]);
  t.same(shown(preview.html), ['always', 'pro', 'deals', 'vip-or-big', 'gone-topic', 'named'], 'a preview shows every block');
  t.notMatch(preview.html, /x1 =/, 'and draws no repeat group or cart');

  const renderer = await sends.forContacts(team.teamId, id);
  const audience = { properties: new Set(['plan']), topics: new Set([topic]), segments: new Set([segment]) };
  const contact = (over: Partial<RenderContact>): RenderContact => ({
    email: 'ann@example.com', first_name: null, last_name: null, unsubscribed: false, created_at: '2024-01-01T00:00:00Z',
    properties: {}, topics: new Map(), segments: new Set(), ...over,
  });
  const items = Array.from({ length: 60 }, (_, i) => ({ title: `T<${i}>`, price: i + 0.5, ratio: 1 / 3, quantity: i === 0 ? undefined : 2, image_url: 'https://img.example/i.png' }));
  const event = { value: 150, at: '2025-03-04T23:30:00Z', items, checkout_url: 'https://shop.example/cart?c=1' };
  const ann = renderer.render({ contact: contact({ first_name: 'Ann', properties: { plan: 'pro' }, topics: new Map([[topic, 'opt_in']]) }), audience, event });
  t.same(shown(ann.html), ['always', 'pro', 'deals', 'vip-or-big', 'named'], 'Ann: her rules; a rule naming a deleted topic hides its block');
  const bob = renderer.render({ contact: contact({ email: 'bob@example.com', segments: new Set([segment]), topics: new Map([[topic, 'opt_out']]) }), audience, event: { items: [] } });
  t.same(shown(bob.html), ['always', 'vip-or-big'], 'Bob: in the segment, opted out, no plan, no name; an empty list draws nothing');
  t.notMatch(bob.html, /shop\.example\/cart/, 'no checkout button without a checkout link');
  const doc = await parseHtml(ann.html);
  const rows = [...doc.querySelectorAll('div')].map((d) => d.textContent ?? '').filter((s) => /^<T<\d+>> x/.test(s));
  t.equal(rows.length, 50, 'a repeat group draws at most 50 items');
  t.equal(rows[0], '<T<0>> x1 = $0.50 on March 4, 2025 (0.33)', 'escaped values, fallbacks and formats (UTC dates, US English)');
  t.equal(rows[1], '<T<1>> x2 = $1.50 on March 4, 2025 (0.33)');
  t.ok([...doc.querySelectorAll('a')].some((a) => a.getAttribute('href') === 'https://shop.example/cart?c=1'), 'the cart\'s checkout link');
  t.match(ann.text!, /<T<0>> x1 = \$0\.50/, 'the text part draws the repeat raw');
  t.notMatch(ann.text!, /svc:/);
  t.equal((ann.text!.match(/^<T</gm) ?? []).length, 50);
});
