import { simpleParser } from 'mailparser';
import type { TrackingService } from '../../core/tracking/index.js';
import { startTestAppliance, type TestAppliance } from './appliance.js';
import { waitFor } from './deadline.js';
import { mailZone } from './email-fixtures.js';
import { testClock, type TestClock } from './test-clock.js';
import { startFakeMx, type FakeMx, type ReceivedMessage } from './fake-mx.js';
import { call, lastEventOf } from './http.js';
import { fakeSendingDomains, type FakeDomains } from './sending.js';
import type { TestDnsServer } from './dns-server.js';

// Open and click tracking end to end: an appliance (api + outbound) whose tracking links point at
// its own loopback listener (`tracking_links: link_base`), a fake MX that receives the mail, and a
// sending domain with both toggles on (`tracked.net`) beside one with them off (`plain.net`).

export interface TrackingRig {
  app: TestAppliance;
  mx: FakeMx;
  dns: TestDnsServer;
  clock: TestClock;
  domains: FakeDomains;
  team: { token: string; teamId: string };
  tracking: TrackingService;
  send(body: Record<string, unknown>): Promise<string>;
  /** Waits until the email's last_event is one of `events`. */
  until(id: string, ...events: string[]): Promise<string>;
  /** The message the MX took for `address` (waits for it), parsed. */
  received(address: string, emailId: string): Promise<{ raw: ReceivedMessage; html: string; text: string }>;
  stop(): Promise<void>;
}

export async function startTrackingRig(options: { databaseUrl?: string; env?: Record<string, string> } = {}): Promise<TrackingRig> {
  const dns = await mailZone(['inbox-one.net', 'inbox-two.net']);
  const mx = await startFakeMx({ dns: dns.address });
  const clock = testClock();
  const app = await startTestAppliance({
    clock, roles: ['api', 'outbound'], databaseUrl: options.databaseUrl,
    env: {
      SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_OUTBOUND_REPLY_TIMEOUT_S: '5',
      SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000', SVC_TRACKING_LINKS: 'link_base', SVC_TRACKING_FLUSH_MS: '20',
      SVC_WEBHOOKS_ALLOW_PRIVATE: 'true', ...options.env,
    },
  });
  const team = await app.newTeam('Tracking');
  const domains = fakeSendingDomains(app, dns);
  const tracked = domains.add({ teamId: team.teamId, name: 'tracked.net' });
  tracked.openTracking = true;
  tracked.clickTracking = true;
  domains.add({ teamId: team.teamId, name: 'plain.net' });
  const base = app.baseUrl;
  const lastEvent = (id: string) => lastEventOf(base, team.token, id);
  return {
    app, mx, dns, clock, domains, team, tracking: app.appliance.services.api.sending.tracking,
    async send(body) {
      const r = await call(base, 'POST', '/emails', { token: team.token, body: { from: 'Shop <news@tracked.net>', subject: 'News', ...body } });
      if (r.status !== 200) throw new Error(`send refused: ${JSON.stringify(r.body)}`);
      return r.body.id as string;
    },
    until: (id, ...events) => waitFor(`${id} to reach ${events.join('/')}`, async () => { const e = await lastEvent(id); return events.includes(e) ? e : undefined; }),
    async received(address, emailId) {
      const raw = await waitFor(`the MX to receive ${emailId} for ${address}`, async () =>
        mx.received.find((m) => m.rcptTo === address && m.messageId?.startsWith(`<${emailId}@`)));
      const parsed = await simpleParser(raw.raw);
      return { raw, html: typeof parsed.html === 'string' ? parsed.html : '', text: parsed.text ?? '' };
    },
    async stop() {
      await app.stop();
      await mx.stop();
      await dns.stop();
    },
  };
}

/** Every tracking link of a message's HTML, in order: clicks then the pixel. */
export function trackingLinks(html: string): { clicks: string[]; pixel: string | undefined } {
  const clicks = [...html.matchAll(/href="(http:\/\/[^"]+\/t\/c\/[A-Za-z0-9_-]+)"/g)].map((m) => m[1]!);
  const pixel = /<img src="(http:\/\/[^"]+\/t\/o\/[A-Za-z0-9_-]+\.gif)"/.exec(html)?.[1];
  return { clicks, pixel };
}
