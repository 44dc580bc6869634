import type { Test } from 'tap';
import { simpleParser } from 'mailparser';
import { Resend } from 'resend';
import { PLATFORM_STREAM_WORK } from '../../core/automations/index.js';
import { startTestAppliance, type TestAppliance } from './appliance.js';
import { platformEvents } from './audience.js';
import { waitFor } from './deadline.js';
import { mailZone } from './email-fixtures.js';
import { startFakeMx, type FakeMx } from './fake-mx.js';
import type { TestDnsServer } from './dns-server.js';
import { call } from './http.js';
import { fakeSendingDomains } from './sending.js';
import { trackingLinks } from './tracking.js';
import { testClock } from './test-clock.js';

// Flows started by mail lifecycle events (svc:email.*) and conditions on topic and segment
// membership, end to end: mail through the ordinary send path to a fake MX found over DNS, the
// platform stream reader and the runs driven by hand on a clock the test moves. Shared by the
// SQLite and the PostgreSQL test files.

export interface EmailFlowRig {
  app: TestAppliance;
  mx: FakeMx;
  dns: TestDnsServer;
  clock: ReturnType<typeof testClock>;
  stop(): Promise<void>;
}

export async function startEmailFlowRig(databaseUrl?: string): Promise<EmailFlowRig> {
  const dns = await mailZone();
  const mx = await startFakeMx({ dns: dns.address });
  const clock = testClock();
  const app = await startTestAppliance({
    clock, roles: ['api', 'outbound'], ...(databaseUrl ? { databaseUrl } : {}),
    env: {
      SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_TRACKING_LINKS: 'link_base', SVC_TRACKING_FLUSH_MS: '20',
    },
  });
  await app.appliance.services.work.enqueue(PLATFORM_STREAM_WORK.kind, PLATFORM_STREAM_WORK.key, {});
  return { app, mx, dns, clock, stop: async () => { await app.stop(); await mx.stop(); await dns.stop(); } };
}

/** One team with a verified sending domain, its API and the durable worker driven by hand. */
export async function flowTeam(rig: EmailFlowRig, name: string, domain: string) {
  const team = await rig.app.newTeam(name);
  fakeSendingDomains(rig.app, rig.dns).add({ teamId: team.teamId, name: domain });
  const api = (method: string, path: string, body?: unknown) => call(rig.app.baseUrl, method, path, { token: team.token, body });
  const work = rig.app.appliance.services.work;
  /** Runs due work; the stream reader leaves events younger than a second and parks on the test's clock. */
  const pump = async () => {
    rig.clock.advance(1_000);
    for (let steps = await work.runDue(); steps > 0; steps = await work.runDue());
  };
  const runs = async (automationId: string) => (await api('GET', `/automations/${automationId}/runs`)).body.data as { id: string }[];
  const run = async (automationId: string, runId: string) => (await api('GET', `/automations/${automationId}/runs/${runId}`)).body;
  const emailEvents = async () => (await platformEvents(rig.app, team.teamId)).filter((e) => e.type.startsWith('svc:email.'));
  return { team, api, pump, runs, run, emailEvents, resend: new Resend(team.token, { baseUrl: rig.app.baseUrl }) };
}

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

const template = async (api: Api, body: Record<string, unknown>) => {
  const created = await api('POST', '/templates', { name: 'Flow mail', subject: 'Hello', ...body });
  if (created.status !== 201) throw new Error(`POST /templates: ${JSON.stringify(created.body)}`);
  if ((await api('POST', `/templates/${created.body.id}/publish`)).status !== 200) throw new Error('publish');
  return created.body.id as string;
};

/** svc:email.delivered starts a flow whose send carries the event's subject; the flow's own mail never re-enrols it. */
export async function deliveredStartsFlow(t: Test, rig: EmailFlowRig): Promise<void> {
  const f = await flowTeam(rig, 'Delivered flows', 'sender-one.net');
  const TEMPLATE = await template(f.api, {
    html: '<p>About: {{about}}. <a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>', variables: [{ key: 'about', type: 'string', fallback_value: '' }],
  });
  const contact = (await f.api('POST', '/contacts', { email: 'Eve@Inbox-One.net', first_name: 'Eve' })).body.id as string;
  const created = await f.resend.automations.create({
    name: 'After delivery', status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { eventName: 'svc:email.delivered' } },
      { key: 'mail', type: 'send_email', config: { template: { id: TEMPLATE, variables: { about: { var: 'event.subject' } } }, from: 'Acme <hello@sender-one.net>', subject: 'Thanks for reading' } },
    ],
    connections: [{ from: 'start', to: 'mail' }],
  });
  t.equal(created.error, null, JSON.stringify(created.error));
  const automationId = created.data!.id;
  const sent = await f.resend.emails.send({ from: 'Acme <news@sender-one.net>', to: ['eve@inbox-one.net', 'stranger@inbox-two.net'], subject: 'Spring news', text: 'Hello' });
  t.equal(sent.error, null, JSON.stringify(sent.error));
  const emailId = sent.data!.id;

  const [firstRun] = await waitFor('the delivered event to enrol Eve', async () => {
    await f.pump();
    const runs = await f.runs(automationId);
    return runs.length ? runs : undefined;
  });
  const flowMail = await waitFor('the flow\'s mail at the fake MX', async () => {
    await f.pump();
    return rig.mx.received.find((m) => m.rcptTo === 'eve@inbox-one.net' && /Thanks for reading/.test(m.raw.toString()));
  });
  t.match(flowMail.raw.toString(), /About: Spring news/, 'the event\'s subject reaches the template');
  const done = await f.run(automationId, firstRun!.id);
  t.equal(done.status, 'completed');
  t.equal(done.contact_id, contact);
  const flowEmailId = done.steps[1].output.email_id as string;

  const delivered = (await f.emailEvents()).filter((e) => e.type === 'svc:email.delivered' && e.data.email_id === emailId);
  t.equal(delivered.length, 1, 'one event: the stranger is no contact');
  t.match(delivered[0]!.data, { contact_id: contact, email_id: emailId, subject: 'Spring news', to: 'eve@inbox-one.net' });
  t.notOk('automation_id' in delivered[0]!.data, 'an API send names no automation');
  // The flow's own mail is delivered too: its event names the automation, and enrols nobody.
  const own = await waitFor('the flow mail\'s svc:email.delivered', async () => {
    await f.pump();
    return (await f.emailEvents()).find((e) => e.type === 'svc:email.delivered' && e.data.email_id === flowEmailId);
  });
  t.match(own.data, { automation_id: automationId, automation_run_id: firstRun!.id, automation_chain: [automationId], contact_id: contact });
  for (let i = 0; i < 3; i++) await f.pump();
  t.equal((await f.runs(automationId)).length, 1, 'the flow\'s own mail does not re-enrol it');
  t.equal(rig.mx.received.filter((m) => /Thanks for reading/.test(m.raw.toString())).length, 1, 'one flow mail, no loop');
}

/** Two flows started by svc:email.sent, each sending: each enrols once on the other's mail, then the chain stops. */
export async function flowsOnEachOthersMailStop(t: Test, rig: EmailFlowRig): Promise<void> {
  const f = await flowTeam(rig, 'Ping pong', 'sender-two.net');
  const TEMPLATE = await template(f.api, { html: '<p>Hi. <a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>' });
  await f.api('POST', '/contacts', { email: 'pat@inbox-two.net' });
  const flow = (name: string) => f.api('POST', '/automations', {
    name, status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'svc:email.sent' } },
      { key: 'mail', type: 'send_email', config: { template: { id: TEMPLATE }, from: 'hello@sender-two.net', subject: `From ${name}` } },
    ],
    connections: [{ from: 'start', to: 'mail' }],
  });
  const a = (await flow('A')).body.id as string;
  const b = (await flow('B')).body.id as string;
  t.equal((await f.api('POST', '/emails', { from: 'news@sender-two.net', to: 'pat@inbox-two.net', subject: 'Kick-off', text: 'Hi' })).status, 200);
  // API mail → A and B; A's mail → B; B's mail → A; their mails name both: nobody more.
  await waitFor('four mails from the flows', async () => {
    await f.pump();
    return rig.mx.received.filter((m) => m.rcptTo === 'pat@inbox-two.net' && /From [AB]/.test(m.raw.toString())).length >= 4;
  });
  for (let i = 0; i < 4; i++) await f.pump();
  t.equal((await f.runs(a)).length, 2, 'A: the API mail and B\'s');
  t.equal((await f.runs(b)).length, 2, 'B: the API mail and A\'s');
  const chains = (await f.emailEvents()).filter((e) => e.type === 'svc:email.sent').map((e) => (e.data.automation_chain as string[] | undefined)?.length ?? 0).sort();
  t.same(chains, [0, 1, 1, 2, 2], 'chains grow by one a hop and stop at every flow of the team');
}

/** svc:email.clicked carries the link: a condition on it takes its branch. */
export async function clickedCarriesLink(t: Test, rig: EmailFlowRig): Promise<void> {
  const team = await rig.app.newTeam('Clicks');
  const domain = fakeSendingDomains(rig.app, rig.dns).add({ teamId: team.teamId, name: 'sender-six.net' });
  domain.clickTracking = true;
  const api = (method: string, path: string, body?: unknown) => call(rig.app.baseUrl, method, path, { token: team.token, body });
  const contact = (await api('POST', '/contacts', { email: 'kim@inbox-one.net' })).body.id as string;
  const created = await api('POST', '/automations', {
    name: 'Offer clickers', status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'svc:email.clicked' } },
      { key: 'offer', type: 'condition', config: { type: 'rule', field: 'event.link', operator: 'ends_with', value: '/offer' } },
      { key: 'mark', type: 'contact_update', config: { last_name: 'Clicker' } },
    ],
    connections: [{ from: 'start', to: 'offer' }, { from: 'offer', to: 'mark', type: 'condition_met' }],
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const sent = await api('POST', '/emails', { from: 'news@sender-six.net', to: 'kim@inbox-one.net', subject: 'Offer', html: '<p><a href="https://shop.example/offer">See the offer</a></p>' });
  const raw = await waitFor('the offer at the MX', async () => rig.mx.received.find((m) => m.rcptTo === 'kim@inbox-one.net' && m.messageId?.startsWith(`<${sent.body.id}@`)));
  const [link] = trackingLinks((await simpleParser(raw.raw)).html || '').clicks;
  t.ok(link, 'the link is tracked');
  const safari = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
  t.equal((await fetch(link!, { redirect: 'manual', headers: { 'user-agent': safari } })).status, 302);
  const event = await waitFor('svc:email.clicked', async () => (await platformEvents(rig.app, team.teamId)).find((e) => e.type === 'svc:email.clicked'));
  t.match(event.data, { contact_id: contact, email_id: sent.body.id, link: 'https://shop.example/offer', subject: 'Offer' });
  await waitFor('the click to reach the flow', async () => {
    rig.clock.advance(1_000);
    for (let steps = await rig.app.appliance.services.work.runDue(); steps > 0; steps = await rig.app.appliance.services.work.runDue());
    return (await api('GET', `/contacts/${contact}`)).body.last_name === 'Clicker';
  });
}

/** svc:email.bounced carries the bounce type: a condition on it takes its branch. */
export async function bouncedCarriesType(t: Test, rig: EmailFlowRig): Promise<void> {
  const f = await flowTeam(rig, 'Bounces', 'sender-five.net');
  rig.mx.script.set('gone@inbox-two.net', { kind: 'rcpt', reply: '550 5.1.1 No such user' });
  const contact = (await f.api('POST', '/contacts', { email: 'gone@inbox-two.net' })).body.id as string;
  const created = await f.api('POST', '/automations', {
    name: 'Clean up', status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'svc:email.bounced' } },
      { key: 'hard', type: 'condition', config: { type: 'rule', field: 'event.bounce_type', operator: 'eq', value: 'Permanent' } },
      { key: 'mark', type: 'contact_update', config: { properties: { bounced_subject: 'x' } } },
    ],
    connections: [{ from: 'start', to: 'hard' }, { from: 'hard', to: 'mark', type: 'condition_met' }],
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.equal((await f.api('POST', '/emails', { from: 'news@sender-five.net', to: 'Gone@inbox-two.net', subject: 'Will bounce', text: 'Hi' })).status, 200);
  const event = await waitFor('svc:email.bounced', async () => (await f.emailEvents()).find((e) => e.type === 'svc:email.bounced'));
  t.match(event.data, { contact_id: contact, bounce_type: 'Permanent', subject: 'Will bounce', bounce: { type: 'Permanent' } });
  const [run] = await waitFor('the bounce to enrol the contact', async () => {
    await f.pump();
    const runs = await f.runs(created.body.id);
    return runs.length ? runs : undefined;
  });
  await f.pump();
  const done = await f.run(created.body.id, run!.id);
  t.same(done.steps.map((s: { key: string; status: string }) => [s.key, s.status]), [['start', 'completed'], ['hard', 'completed'], ['mark', 'completed']]);
}

/** A team with no svc:email.* trigger writes no svc:email.* platform event. */
export async function noTriggerNoEvent(t: Test, rig: EmailFlowRig): Promise<void> {
  const f = await flowTeam(rig, 'No flows', 'sender-three.net');
  await f.api('POST', '/contacts', { email: 'quinn@inbox-one.net' });
  const sent = await f.api('POST', '/emails', { from: 'news@sender-three.net', to: 'quinn@inbox-one.net', subject: 'Plain', text: 'Hi' });
  await waitFor('delivered', async () => (await f.api('GET', `/emails/${sent.body.id}`)).body.last_event === 'delivered');
  t.same(await f.emailEvents(), []);
}

/** An exit on a mail event with no automation starting on it: the event is written, and it ends the run. */
export async function mailEventExitEndsRun(t: Test, rig: EmailFlowRig): Promise<void> {
  const f = await flowTeam(rig, 'Exits on mail', 'sender-seven.net');
  t.equal((await f.api('POST', '/events', { name: 'promo.started' })).status, 201);
  const contact = (await f.api('POST', '/contacts', { email: 'rae@inbox-one.net' })).body.id as string;
  const created = await f.api('POST', '/automations', {
    name: 'Until they get mail', status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'promo.started', exit_events: ['svc:email.delivered'] } },
      { key: 'wait', type: 'delay', config: { duration: '1 day' } },
      { key: 'mark', type: 'contact_update', config: { last_name: 'Waited' } },
    ],
    connections: [{ from: 'start', to: 'wait' }, { from: 'wait', to: 'mark' }],
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.equal((await f.api('POST', '/events/send', { event: 'promo.started', contact_id: contact })).status, 202);
  await f.pump();
  const [run] = await f.runs(created.body.id);
  t.equal((await f.run(created.body.id, run!.id)).status, 'running', 'parked on the delay');
  const sent = await f.api('POST', '/emails', { from: 'news@sender-seven.net', to: 'rae@inbox-one.net', subject: 'Anything', text: 'Hi' });
  t.equal(sent.status, 200);
  const event = await waitFor('svc:email.delivered, written for the exit alone', async () => (await f.emailEvents()).find((e) => e.type === 'svc:email.delivered'));
  t.match(event.data, { contact_id: contact, email_id: sent.body.id });
  const ended = await waitFor('the exit to end the run', async () => {
    await f.pump();
    const now = await f.run(created.body.id, run!.id);
    return now.status === 'cancelled' ? now : undefined;
  });
  t.equal(ended.status, 'cancelled');
  t.equal((await f.api('GET', `/contacts/${contact}`)).body.last_name, null, 'the step after the delay never ran');
}

/** Condition steps and a flow template's show-when rules read topic and segment membership. */
export async function membershipConditions(t: Test, rig: EmailFlowRig): Promise<void> {
  const f = await flowTeam(rig, 'Members', 'sender-four.net');
  t.equal((await f.api('POST', '/contact-properties', { key: 'plan', type: 'string' })).status, 201);
  const topic = (await f.api('POST', '/topics', { name: 'Deals', default_subscription: 'opt_out' })).body.id as string;
  const vip = (await f.api('POST', '/segments', { name: 'VIP' })).body.id as string;
  const pro = (await f.api('POST', '/segments', { name: 'Pro', filter: { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }] } })).body.id as string;
  t.equal((await f.api('POST', '/events', { name: 'check.in' })).status, 201);
  const inside = (await f.api('POST', '/contacts', { email: 'in@inbox-one.net', segments: [{ id: vip }], topics: [{ id: topic, subscription: 'opt_in' }], properties: { plan: 'pro' } })).body.id;
  const outside = (await f.api('POST', '/contacts', { email: 'out@inbox-two.net', properties: { plan: 'free' } })).body.id;
  const block = (text: string, show_when: unknown) => ({ type: 'text', text, show_when });
  const layout = { sections: [{ columns: [[
    { type: 'text', text: 'Always here' }, block('Deals block', { all: [{ topic, subscription: 'opt_in' }] }), block('VIP block', { all: [{ segment: vip }] }), block('Pro block', { any: [{ segment: pro }] }),
  ]] }] };
  const visual = await template(f.api, { layout });
  const rule = (field: string, value: unknown) => ({ type: 'rule', field, operator: 'eq', value });
  const refused = await f.api('POST', '/automations', {
    name: 'Bad', steps: [{ key: 'start', type: 'trigger', config: { event_name: 'check.in' } }, { key: 'is', type: 'condition', config: rule('segments.00000000-0000-7000-8000-000000000000', true) }, { key: 'x', type: 'contact_update', config: { first_name: 'x' } }],
    connections: [{ from: 'start', to: 'is' }, { from: 'is', to: 'x', type: 'condition_met' }],
  });
  t.equal(refused.status, 422, 'a condition naming no segment of the team is refused');
  t.match(refused.body.errors, [{ path: 'is' }]);
  const created = await f.api('POST', '/automations', {
    name: 'Members only', status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'check.in' } },
      { key: 'is', type: 'condition', config: { type: 'and', rules: [rule(`segments.${vip}`, true), rule(`segments.${pro}`, true), rule(`topics.${topic}`, 'opt_in')] } },
      { key: 'welcome', type: 'contact_update', config: { last_name: 'Member' } },
      { key: 'other', type: 'contact_update', config: { last_name: 'Outsider' } },
      { key: 'mail', type: 'send_email', config: { template: { id: visual }, from: 'hello@sender-four.net', subject: 'Members news' } },
    ],
    connections: [{ from: 'start', to: 'is' }, { from: 'is', to: 'welcome', type: 'condition_met' }, { from: 'is', to: 'other', type: 'condition_not_met' }, { from: 'welcome', to: 'mail' }, { from: 'other', to: 'mail' }],
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  for (const contact of [inside, outside]) t.equal((await f.api('POST', '/events/send', { event: 'check.in', contact_id: contact })).status, 202);
  await f.pump();
  t.equal((await f.api('GET', `/contacts/${inside}`)).body.last_name, 'Member', 'in the segments and opted in: condition_met');
  t.equal((await f.api('GET', `/contacts/${outside}`)).body.last_name, 'Outsider', 'neither: condition_not_met');
  const mail = async (to: string) => {
    const raw = await waitFor(`the flow mail to ${to}`, async () => rig.mx.received.find((m) => m.rcptTo === to && /Members news/.test(m.raw.toString())));
    return (await simpleParser(raw.raw)).html || '';
  };
  const inMail = await mail('in@inbox-one.net');
  const outMail = await mail('out@inbox-two.net');
  for (const text of ['Always here', 'Deals block', 'VIP block', 'Pro block']) t.match(inMail, text, `the member sees ${text}`);
  t.match(outMail, 'Always here');
  for (const text of ['Deals block', 'VIP block', 'Pro block']) t.notMatch(outMail, text, `the outsider does not see ${text}`);
}
