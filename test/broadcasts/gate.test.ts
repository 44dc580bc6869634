import t from 'tap';
import { startTestAppliance } from '../helpers/appliance.js';
import { addContact, campaignTeam, postalAddress } from '../helpers/broadcasts.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { call } from '../helpers/http.js';
import { verifyDomainThroughApi } from '../helpers/sending.js';

// The send gate and the content checks over raw HTTP: each gate step refused in turn with the
// first failing check (nothing created when a create with `send` is refused), the checklist, the
// operator's pause (403), a team that cannot send (403); every content check's pass, warn and
// fail, a fail stopping the send until acknowledged.
const dns = await mailZone();
const app = await startTestAppliance({ env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0' } });
t.teardown(async () => { await app.stop(); await dns.stop(); });
const base = app.baseUrl;
const good = { from: 'News <news@gate-sender.net>', subject: 'Hello', preview_text: 'Hi', html: '<p>Hello {{{UNSUBSCRIBE_URL}}}</p>' };

const count = async (token: string) => (await call(base, 'GET', '/broadcasts', { token })).body.data.length as number;

t.test('each gate step, first failure first; nothing created on refusal; the checklist', async (t) => {
  const { teamId, token } = await app.newTeam('Gate');
  const segment = (await call(base, 'POST', '/segments', { token, body: { name: 'All' } })).body.id as string;
  const create = (extra: Record<string, unknown>) => call(base, 'POST', '/broadcasts', { token, body: { ...good, segment_id: segment, ...extra, send: true } });
  const refusal = async (extra: Record<string, unknown>, status: number, check: string) => {
    const r = await create(extra);
    t.equal(r.status, status, `${check}: ${JSON.stringify(r.body)}`);
    t.match(r.body, { name: 'validation_error', details: { check } });
  };
  await refusal({}, 422, 'domain');
  await verifyDomainThroughApi(base, token, dns, 'gate-sender.net');
  await refusal({ from: 'News <news@elsewhere-sender.net>' }, 422, 'domain');
  await refusal({}, 422, 'postal_address');
  t.equal((await call(base, 'PATCH', '/team', { token, body: { postal_address: postalAddress } })).status, 200);
  await refusal({ segment_id: null }, 422, 'segment');
  await refusal({ segment_id: '00000000-0000-7000-8000-000000000000' }, 422, 'segment');
  await refusal({ html: null, text: '   ' }, 422, 'body');
  await refusal({ html: null, template_id: 'welcome' }, 422, 'body');
  t.equal(await count(token), 0, 'not one broadcast was created by the refused sends');

  const draft = (await call(base, 'POST', '/broadcasts', { token, body: { name: 'Draft', from: good.from } })).body.id as string;
  const checklist = await call(base, 'GET', `/broadcasts/${draft}/checklist`, { token });
  t.equal(checklist.status, 200);
  t.match(checklist.body, { object: 'broadcast_checklist', ready: false });
  t.same(checklist.body.checks.map((c: { name: string; status: string }) => `${c.name}:${c.status}`),
    ['domain:pass', 'postal_address:pass', 'segment:fail', 'marketing:pass', 'standing:pass', 'body:fail']);
  t.equal((await call(base, 'POST', `/broadcasts/${draft}/send`, { token, body: {} })).body.details.check, 'segment', 'the first failure');
  t.equal((await call(base, 'GET', `/broadcasts/${draft}`, { token })).body.status, 'draft', 'still a draft');
  await call(base, 'PATCH', `/broadcasts/${draft}`, { token, body: { segment_id: segment, subject: 'S', text: 'T {{{UNSUBSCRIBE_URL}}}', preview_text: 'p' } });
  t.match((await call(base, 'GET', `/broadcasts/${draft}/checklist`, { token })).body, { ready: true });

  // A team that cannot send: its keys are refused outright, and its broadcasts never pass the gate.
  await app.appliance.services.api.foundation.teams.setStatus(teamId, 'suspended');
  const refused = await app.appliance.services.api.campaigns.broadcasts.send(teamId, draft, {}).catch((err: unknown) => err);
  t.match(refused, { statusCode: 403, errorName: 'validation_error', options: { details: { check: 'standing' } } });
  t.equal((await call(base, 'GET', '/broadcasts', { token })).status, 403, 'and its keys are refused');
  await app.appliance.services.api.foundation.teams.setStatus(teamId, 'active');
  t.equal((await call(base, 'POST', `/broadcasts/${draft}/send`, { token, body: {} })).status, 200, 'sent once the team may send again');
});

t.test('marketing sends paused by the operator: every campaign send is 403', async (t) => {
  const paused = await startTestAppliance({ env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_MARKETING_SENDS_PAUSED: 'true' } });
  t.teardown(() => paused.stop());
  const team = await campaignTeam(paused, dns, 'Paused', 'paused-sender.net');
  const r = await call(paused.baseUrl, 'POST', '/broadcasts', { token: team.token, body: { ...good, from: 'n@paused-sender.net', segment_id: team.segmentId, send: true } });
  t.equal(r.status, 403);
  t.match(r.body, { name: 'validation_error', details: { check: 'marketing' } });
  t.equal((await call(paused.baseUrl, 'GET', '/broadcasts', { token: team.token })).body.data.length, 0);
  const email = await call(paused.baseUrl, 'POST', '/emails', { token: team.token, body: { from: 'n@paused-sender.net', to: 'x@inbox-one.net', subject: 's', text: 't' } });
  t.equal(email.status, 200, 'transactional mail still goes');
});

t.test('content checks: pass, warn and fail per check; a fail stops the send until acknowledged', async (t) => {
  const team = await campaignTeam(app, dns, 'Checks', 'checks-sender.net');
  const token = team.token;
  await addContact(app, token, { email: 'reader@inbox-one.net', properties: { plan: 'pro' } });
  const make = async (body: Record<string, unknown>) =>
    (await call(base, 'POST', '/broadcasts', { token, body: { from: 'n@checks-sender.net', segment_id: team.segmentId, ...body } })).body.id as string;
  const checksOf = async (id: string) => {
    const r = await call(base, 'POST', `/broadcasts/${id}/checks`, { token });
    t.equal(r.status, 200);
    return Object.fromEntries((r.body.checks as { name: string; status: string }[]).map((c) => [c.name, c.status]));
  };
  const clean = await make({
    subject: 'Spring news', preview_text: 'All that is new this spring',
    html: `<p>Hi {{{FIRST_NAME|there}}} on {{{PLAN}}}: <a href="https://shop.example.com/spring">spring</a> <img src="https://cdn.example.com/a.png" alt="A">
      ${'Plenty of words here to keep the picture company. '.repeat(6)} <a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>`,
  });
  t.same(await checksOf(clean), {
    variables: 'pass', links: 'pass', link_types: 'pass', subject: 'pass', preview_text: 'pass',
    alt_text: 'pass', image_weight: 'pass', text_and_images: 'pass', unsubscribe: 'pass',
  });
  const heavy = 'data:image/png;base64,' + Buffer.alloc(1_100_000).toString('base64');
  const warned = await make({
    subject: 'S'.repeat(61), preview_text: null,
    html: `<a href="http://plain.example.com/">plain</a><img src="${heavy}">`,
  });
  t.same(await checksOf(warned), {
    variables: 'pass', links: 'pass', link_types: 'warn', subject: 'warn', preview_text: 'warn',
    alt_text: 'warn', image_weight: 'warn', text_and_images: 'warn', unsubscribe: 'warn',
  });
  t.same((await checksOf(await make({ subject: 'x', preview_text: 'P'.repeat(151), text: 'hi {{{UNSUBSCRIBE_URL}}}' }))).preview_text, 'warn', 'preview text past 150');
  const failing = await make({
    subject: '   ', preview_text: 'p',
    html: '<p>{{{NICKNAME}}} <a href="">empty</a> <a href="#">hash</a> <a href="/relative">rel</a> <a href="java\tscript:alert(1)">js</a></p>',
  });
  const failed = await checksOf(failing);
  t.match(failed, { variables: 'fail', links: 'fail', link_types: 'fail', subject: 'fail' });
  const refused = await call(base, 'POST', `/broadcasts/${failing}/send`, { token, body: {} });
  t.equal(refused.status, 422);
  t.equal(refused.body.name, 'validation_error');
  t.same(refused.body.details.checks.map((c: { name: string }) => c.name).sort(), ['link_types', 'links', 'subject', 'variables']);
  t.match(refused.body.details.checks.find((c: { name: string }) => c.name === 'variables'), { status: 'fail', items: ['NICKNAME'] });
  t.equal((await call(base, 'GET', `/broadcasts/${failing}`, { token })).body.status, 'draft', 'nothing sent');
  const warnOnly = await call(base, 'POST', `/broadcasts/${warned}/send`, { token, body: {} });
  t.equal(warnOnly.status, 200, 'warnings never stop a send');
  const acknowledged = await call(base, 'POST', `/broadcasts/${failing}/send`, { token, body: { acknowledge_checks: true } });
  t.equal(acknowledged.status, 200, 'acknowledged fails send anyway');
  t.equal((await call(base, 'GET', `/broadcasts/${failing}`, { token })).body.status, 'queued');
  const unknown = await call(base, 'POST', '/broadcasts', { token, body: { name: 'x', colour: 'red' } });
  t.equal(unknown.status, 400, 'an unknown field is 400');
});

t.test('a broadcast naming a published template sends its content; a draft-only template is no body', async (t) => {
  const team = await campaignTeam(app, dns, 'Templated', 'templated-sender.net');
  const token = team.token;
  const created = await call(base, 'POST', '/templates', {
    token, body: { name: 'Spring', alias: 'spring', subject: 'Spring is here', html: '<p>Our spring letter. <a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>' },
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const make = () => call(base, 'POST', '/broadcasts', { token, body: { from: 'n@templated-sender.net', segment_id: team.segmentId, template_id: 'spring', preview_text: 'p' } });
  const draftOnly = (await make()).body.id as string;
  const refused = await call(base, 'POST', `/broadcasts/${draftOnly}/send`, { token, body: {} });
  t.match(refused, { status: 422, body: { details: { check: 'body' } } }, 'only a draft: no body');
  t.equal((await call(base, 'POST', `/templates/${created.body.id}/publish`, { token })).status, 200);
  const checklist = (await call(base, 'GET', `/broadcasts/${draftOnly}/checklist`, { token })).body;
  t.match(checklist, { ready: true }, 'published: the template is the body');
  t.equal((await call(base, 'POST', `/broadcasts/${draftOnly}/send`, { token, body: {} })).status, 200);
});
