import { Resend } from 'resend';
import { startTestAppliance, type TestAppliance } from './appliance.js';
import { addContact, campaignTeam, drainWork, parseMessage, type CampaignTeam } from './broadcasts.js';
import { waitFor } from './deadline.js';
import { mailZone } from './email-fixtures.js';
import { testClock, type TestClock } from './test-clock.js';
import { startFakeMx, type FakeMx } from './fake-mx.js';
import { call } from './http.js';
import { trackingLinks } from './tracking.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

// A broadcast with open and click tracking, sent for real: an appliance (api + outbound) on a
// clock the test moves, its tracking links on its own listener (`tracking_links: link_base`), a
// fake MX taking the mail, a landing server the links lead to, and a campaign team whose verified
// domain has both tracking toggles on. What each recipient's message carries is read at the MX.

export interface EngagementRig {
  app: TestAppliance;
  clock: TestClock;
  team: CampaignTeam;
  landing: WebhookReceiver;
  resend: Resend;
  /** Sends a broadcast to the team's segment (for `topicId`) and waits until every message is delivered. */
  sendBroadcast(html: string, topicId: string): Promise<{ id: string; messages: Map<string, BroadcastMessage> }>;
  /** Waits for every recorded hit's commit. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export interface BroadcastMessage {
  emailId: string;
  clicks: string[];
  pixel: string | undefined;
  /** The List-Unsubscribe URL (RFC 8058's one-click endpoint). */
  unsubscribe: string;
  html: string;
}

export async function startEngagementRig(options: { databaseUrl?: string } = {}): Promise<EngagementRig> {
  const dns = await mailZone();
  const mx = await startFakeMx({ dns: dns.address });
  const landing = await startWebhookReceiver();
  const clock = testClock();
  const app = await startTestAppliance({
    clock, roles: ['api', 'outbound'], databaseUrl: options.databaseUrl,
    env: {
      SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_REPLY_TIMEOUT_S: '5',
      SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000', SVC_TRACKING_LINKS: 'link_base', SVC_TRACKING_FLUSH_MS: '20',
      SVC_BROADCASTS_PAGE_SIZE: '2',
    },
  });
  const team = await campaignTeam(app, dns, 'Engaging', 'engaging.net');
  await trackDomain(app, team);
  const tracking = app.appliance.services.api.sending.tracking;
  return {
    app, clock, team, landing, resend: new Resend(team.token, { baseUrl: app.baseUrl }),
    sendBroadcast: (html, topicId) => sendBroadcast(app, mx, team, html, topicId),
    flush: () => tracking.flush(),
    async stop() {
      await app.stop();
      await mx.stop();
      await landing.stop();
      await dns.stop();
    },
  };
}

async function trackDomain(app: TestAppliance, team: CampaignTeam): Promise<void> {
  const domains = await call(app.baseUrl, 'GET', '/domains', { token: team.token });
  const domain = (domains.body.data as { id: string; name: string }[]).find((d) => d.name === team.domain);
  const patched = await call(app.baseUrl, 'PATCH', `/domains/${domain!.id}`, { token: team.token, body: { open_tracking: true, click_tracking: true } });
  if (patched.status !== 200) throw new Error(`PATCH /domains: ${JSON.stringify(patched.body)}`);
}

async function sendBroadcast(app: TestAppliance, mx: FakeMx, team: CampaignTeam, html: string, topicId: string) {
  const created = await call(app.baseUrl, 'POST', '/broadcasts', {
    token: team.token,
    body: { name: 'Engagement', segment_id: team.segmentId, from: `News <news@${team.domain}>`, subject: 'Spring news', preview_text: 'What is new', html, text: 'Spring news', topic_id: topicId, send: true },
  });
  if (created.status !== 201) throw new Error(`POST /broadcasts: ${JSON.stringify(created.body)}`);
  const id = created.body.id as string;
  await drainWork(app);
  const sent = (await call(app.baseUrl, 'GET', `/broadcasts/${id}/recipients?type=sent&limit=100`, { token: team.token })).body.data as { email: string; email_id: string }[];
  await waitFor('every broadcast message delivered', async () => {
    const delivered = await call(app.baseUrl, 'GET', `/broadcasts/${id}/recipients?type=delivered&limit=100`, { token: team.token });
    return delivered.body.data.length === sent.length ? true : undefined;
  });
  const messages = new Map<string, BroadcastMessage>();
  for (const r of sent) {
    const raw = mx.received.find((m) => m.rcptTo === r.email && m.messageId?.startsWith(`<${r.email_id}@`));
    if (!raw) throw new Error(`no message at the MX for ${r.email}`);
    const mail = await parseMessage(raw.raw);
    const html = typeof mail.html === 'string' ? mail.html : '';
    const header = mail.headerLines.find((h) => h.key === 'list-unsubscribe')?.line ?? '';
    const unsubscribe = /<([^>]+)>/.exec(header)?.[1];
    if (!unsubscribe) throw new Error(`no List-Unsubscribe URL for ${r.email}`);
    messages.set(r.email, { emailId: r.email_id, ...trackingLinks(html), unsubscribe, html });
  }
  return { id, messages };
}
