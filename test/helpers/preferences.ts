import { connect } from 'node:net';
import type { TestAppliance } from './appliance.js';
import { call, CALL_TIMEOUT_MS } from './http.js';
import { withDeadline } from './deadline.js';

// The preference tests' shared set-up: a team with a sender identity and topics of each kind, and
// a contact; plus plain HTTP for the HTML pages (their answers are not JSON).

export interface PageAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** One browser-like request: a User-Agent, a form body when given. */
export async function page(base: string, method: 'GET' | 'POST' | 'HEAD', path: string, form?: URLSearchParams, userAgent = 'pref-tests/1.0'): Promise<PageAnswer> {
  const headers: Record<string, string> = { 'user-agent': userAgent };
  if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(base + path, { method, headers, body: form?.toString(), signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Bytes on a socket, exactly as written (what a mailbox provider's one-click POST looks like), and the raw answer. */
export async function rawHttp(base: string, request: string): Promise<{ status: number; text: string }> {
  const url = new URL(base);
  const socket = connect(Number(url.port), url.hostname);
  const chunks: Buffer[] = [];
  const ended = new Promise<void>((resolve, reject) => {
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', resolve);
    socket.on('error', reject);
  });
  socket.write(request);
  await withDeadline('the raw HTTP answer', ended, CALL_TIMEOUT_MS);
  const text = Buffer.concat(chunks).toString('utf8');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text };
}

/** The checkboxes of a preference page: topic id → checked. */
export function checkboxes(html: string): Record<string, boolean> {
  const boxes: Record<string, boolean> = {};
  for (const m of html.matchAll(/<input type="checkbox" id="topic-\d+" name="topic" value="([^"]+)"( checked)?/g)) boxes[m[1]!] = Boolean(m[2]);
  return boxes;
}

export interface AudienceFixture {
  teamId: string;
  token: string;
  contactId: string;
  email: string;
  topics: { news: string; offers: string; insiders: string; secret: string; club: string };
}

/**
 * A team "Acme" with a postal address and five topics: News (public, default in), Offers (public,
 * default out), Insiders (private, default in: shown), Secret (private, default out: hidden), Club
 * (private, default out, which the contact opted into: shown); and one subscribed contact.
 */
export async function audienceFixture(app: TestAppliance, name: string, senderName = 'Acme News'): Promise<AudienceFixture> {
  const { teamId, token } = await app.newTeam(name);
  const patched = await call(app.baseUrl, 'PATCH', '/team', {
    token, body: { sender_name: senderName, postal_address: { line1: '1 Main St', city: 'Berlin', postal_code: '10115', country: 'DE' } },
  });
  if (patched.status !== 200) throw new Error(`PATCH /team: ${JSON.stringify(patched.body)}`);
  const topic = async (topicName: string, default_subscription: string, visibility: string, description?: string) => {
    const r = await call(app.baseUrl, 'POST', '/topics', { token, body: { name: topicName, default_subscription, visibility, description } });
    if (r.status !== 201) throw new Error(`POST /topics: ${JSON.stringify(r.body)}`);
    return r.body.id as string;
  };
  const topics = {
    news: await topic('News', 'opt_in', 'public', 'What is new, monthly'),
    offers: await topic('Offers', 'opt_out', 'public'),
    insiders: await topic('Insiders', 'opt_in', 'private'),
    secret: await topic('Secret', 'opt_out', 'private'),
    club: await topic('Club', 'opt_out', 'private'),
  };
  const email = `reader+${name.toLowerCase().replaceAll(/\W/g, '')}@example.com`;
  const c = await call(app.baseUrl, 'POST', '/contacts', { token, body: { email, first_name: 'Rea', topics: [{ id: topics.club, subscription: 'opt_in' }] } });
  if (c.status !== 201) throw new Error(`POST /contacts: ${JSON.stringify(c.body)}`);
  return { teamId, token, contactId: c.body.id as string, email, topics };
}

/** The contact's unsubscribe and preference links, as broadcasts will put them in its mail. */
export function linksOf(app: TestAppliance, teamId: string, contactId: string, email: string) {
  return app.appliance.services.api.audience.preferences.linksFor({ id: contactId, team_id: teamId, email_key: email.toLowerCase() });
}

export const pathOf = (url: string) => new URL(url).pathname;
