// Personalised rendering, in one run: BENCH_RENDERS (10,000) messages from one published visual
// template — merge variables, show-when rules on a property, a topic and the trigger event, and a
// repeat group over the event's items with formats — through the renderer campaigns and flows use
// (`templateSends.forContacts`: the version compiled once, then one walk per recipient), beside a
// plain string substitution over a text of the same size (the same compiled HTML, its `{{key}}`
// placeholders replaced by one regular expression, values escaped), in the same process and run.
//
// Each figure is the median of BENCH_ROUNDS rounds (3) after a warm-up round: renders a second of
// wall time and CPU microseconds a render (process.cpuUsage, user + system), on one core: the
// renders run one after another on this thread. The machines are shared and noisy: compare the
// figures of one run, not across runs.
//
// Target (issue #14): ≥ 5,000 renders/s on one core.
//
// Profile: node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/templates.js
import type { AudienceFacts, RenderContact } from '../core/templates/index.js';
import { startTestAppliance } from '../test/helpers/appliance.js';
import { call } from '../test/helpers/http.js';

const RENDERS = intFromEnv('BENCH_RENDERS', 10_000);
const ROUNDS = intFromEnv('BENCH_ROUNDS', 3);
const TARGET = 5000;
const PLANS = ['free', 'pro', 'team'];

function intFromEnv(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
}

const block = (type: string, fields: Record<string, unknown>) => ({ type, ...fields });

/** A newsletter-sized layout: every personalisation the issue names, among ordinary blocks. */
function layoutFor(topic: string) {
  return {
    sections: [
      { columns: [[block('preheader', { text: 'This week for {{first_name}}' })]] },
      { columns: [[block('image', { src: '{{brand.logo_url}}', alt: 'Logo' }), block('heading', { text: 'Hello {{first_name}}, your {{plan}} week' })]] },
      { columns: [[block('text', { text: 'You have {{points}} points. {{{contact.email}}} is where this goes.' })],
        [block('button', { text: 'See your account', href: 'https://acme.example/account?u={{user_id}}' })]] },
      { columns: [[block('card', { title: 'Pro tips', text: 'Only for pro plans.', show_when: { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }] } })]] },
      { show_when: { all: [{ topic, subscription: 'opt_in' }] }, columns: [[block('text', { text: 'Deals for subscribers: {{deal}}' })]] },
      { columns: [[block('text', { text: 'Big spender!', show_when: { all: [{ event: 'value', op: 'gt', value: 100 }] } })]] },
      { repeat: 'event.items', columns: [[block('text', { text: '{{{item.title}}} ({{{item.variant|standard}}}) x{{{item.quantity|1}}}: {{{item.price|0|currency:USD}}}' })]] },
      { columns: [[block('text', { text: 'Order placed {{{event.at||date:long}}}, total {{{event.value|0|currency:USD}}}.' })]] },
      { columns: [[block('divider', {}), block('social', { links: [{ network: 'x', href: 'https://x.example/acme' }, { network: 'github', href: 'https://github.example/acme' }] })]] },
      { columns: [[block('footer', { text: 'You get this because you signed up.' })]] },
    ],
  };
}

const variables = ['first_name', 'plan', 'points', 'user_id', 'deal'].map((key) => ({ key, type: key === 'points' ? 'number' : 'string', fallback_value: key === 'deal' ? 'none' : null }));

interface Recipient {
  variables: Record<string, unknown>;
  contact: RenderContact;
  event: Record<string, unknown>;
}

/** Recipient i: deterministic, varied enough that every rule goes both ways. */
function recipient(i: number, topic: string): Recipient {
  const plan = PLANS[i % PLANS.length]!;
  const email = `u${i}@example.com`;
  const items = Array.from({ length: 1 + (i % 4) }, (_, n) => ({ title: `Item <${n}>`, variant: n % 2 ? 'blue' : '', quantity: n + 1, price: 9.5 * (n + 1) }));
  return {
    variables: { first_name: `Ann & ${i}`, plan, points: i * 7, user_id: `u-${i}`, ...(i % 5 ? { deal: `${i % 30}% off` } : {}) },
    contact: {
      email, first_name: `Ann ${i}`, last_name: null, unsubscribed: false, created_at: '2025-01-01T00:00:00Z', properties: { plan },
      topics: new Map([[topic, i % 2 ? 'opt_in' : 'opt_out']]), segments: new Set(), unsubscribe_url: `https://svc.example/u/${i}`,
    },
    event: { value: (i % 200) + 0.99, at: '2025-03-04T10:00:00Z', items },
  };
}

interface Round { perSec: number; cpuUs: number; bytes: number }

/** One timed pass over every recipient: renders a second, CPU µs a render, output bytes. */
function timedPass(recipients: readonly Recipient[], render: (r: Recipient) => string): Round {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let bytes = 0;
  for (const r of recipients) bytes += render(r).length;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { perSec: recipients.length / seconds, cpuUs: (cpu.user + cpu.system) / recipients.length, bytes: bytes / recipients.length };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => escapes[c]!);

async function main(): Promise<void> {
  const app = await startTestAppliance({ roles: ['api'] });
  try {
    const team = await app.newTeam('Templates bench');
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await call(app.baseUrl, method, path, { token: team.token, body });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const topic = (await api('POST', '/topics', { name: 'Deals', default_subscription: 'opt_in' })).id as string;
    const id = (await api('POST', '/templates', { name: 'Bench', subject: 'Your week, {{first_name}}', layout: layoutFor(topic), variables })).id as string;
    await api('POST', `/templates/${id}/publish`);
    const compiledHtml = (await api('GET', `/templates/${id}`)).html as string;
    const recipients = Array.from({ length: RENDERS }, (_, i) => recipient(i, topic));
    const audience: AudienceFacts = { properties: new Set(['plan']), topics: new Set([topic]), segments: new Set() };

    const renderer = await app.appliance.services.api.content.templateSends.forContacts(team.teamId, id);
    const svc = (r: Recipient) => {
      const out = renderer.render({ variables: r.variables, contact: r.contact, audience, event: r.event });
      return out.html + (out.text ?? '') + (out.subject ?? '');
    };
    // The plain baseline: the same compiled HTML, each {{key}} replaced by the recipient's value.
    const plain = (r: Recipient) => compiledHtml.replace(/\{\{\{?\s*([\w.]+)[^}]*\}\}\}?/g, (_, key: string) => escapeHtml(String(r.variables[key] ?? '')));
    console.log(`templates bench: ${RENDERS} recipients, compiled HTML ${(compiledHtml.length / 1024).toFixed(1)} KiB, ${ROUNDS} rounds after a warm-up`);
    timedPass(recipients, svc);
    timedPass(recipients, plain);
    const rounds = { svc: [] as Round[], plain: [] as Round[] };
    for (let i = 0; i < ROUNDS; i++) {
      rounds.svc.push(timedPass(recipients, svc));
      rounds.plain.push(timedPass(recipients, plain));
    }
    const report = (name: string, list: Round[], note: string) => {
      const perSec = median(list.map((r) => r.perSec));
      const cpuUs = median(list.map((r) => r.cpuUs));
      console.log(`${name}: ${perSec.toFixed(0)} renders/s, cpu ${cpuUs.toFixed(0)} µs/render = ${(1e6 / cpuUs).toFixed(0)} renders per CPU-second, `
        + `${(median(list.map((r) => r.bytes)) / 1024).toFixed(1)} KiB a message (per round: ${list.map((r) => r.perSec.toFixed(0)).join(', ')}) ${note}`);
      return perSec;
    };
    const svcRate = report('svc visual template', rounds.svc, '(html + text + subject; variables, show-when, repeat group)');
    const plainRate = report('plain substitution  ', rounds.plain, '(html only: one regular expression over the same text)');
    const cpuRate = 1e6 / median(rounds.svc.map((r) => r.cpuUs));
    console.log(`svc/plain throughput ${(svcRate / plainRate).toFixed(2)}; target ≥ ${TARGET} renders/s on one core `
      + `(${Math.min(svcRate, cpuRate) >= TARGET ? 'within target' : 'UNDER TARGET'}: the lower of wall and CPU rates)`);
    const sample = svc(recipients[1]!);
    if (!/Item &lt;0&gt;/.test(sample) || !/Deals for subscribers/.test(sample)) throw new Error('the rendered message lacks its repeat group or show-when section');
  } finally {
    await app.stop();
  }
}

await main();
