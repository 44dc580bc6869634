import nodemailer from 'nodemailer';
import { startTestAppliance, type TestAppliance } from './appliance.js';
import { DEFAULT_WAIT_MS } from './deadline.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { call, type CallResult } from './http.js';
import { eventsRepo } from '../../storage/repos/index.js';
import type { InboundRole } from '../../bin/roles/inbound.js';
import type { ReceivingDomain } from '../../core/receiving/ports.js';
import type { Clock } from '../../core/clock.js';

// A real appliance (api + inbound roles) on loopback with a DNS server the test edits. Receiving
// domains come from an in-memory map standing in for the domains lookup (the end-to-end test in
// test/receiving/domains-e2e.test.ts goes through the real domains API instead).

export interface InboundRig {
  app: TestAppliance;
  dns: TestDnsServer;
  smtpPort: number;
  domains: Map<string, ReceivingDomain>;
  addDomain(teamId: string, name: string): ReceivingDomain;
  /** Sends raw bytes with nodemailer's SMTP client; answers the 250 line or throws its error. */
  send(envelope: { from: string; to: string[] }, raw: string | Buffer): Promise<{ response: string; id: string }>;
  api(token: string, method: string, path: string, body?: unknown): Promise<CallResult>;
  events(type: string): Promise<{ team_id: string; data: Record<string, any> }[]>;
  stop(): Promise<void>;
}

export interface RigOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Where the appliance's pino lines go (set SVC_LOG_LEVEL in `env` too: the default is silent). */
  logDestination?: { write(line: string): void };
}

export async function startInboundRig(options: RigOptions = {}): Promise<InboundRig> {
  const dns = await startDnsServer();
  const app = await startTestAppliance({
    roles: ['api', 'inbound'],
    clock: options.clock,
    logDestination: options.logDestination,
    env: {
      SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: '0', SVC_DNS_SERVERS: dns.address, SVC_DNS_TIMEOUT_MS: '500',
      SVC_MAIL_HOSTNAME: 'mx.svc-test.net', SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000',
      ...options.env,
    },
  });
  const inbound = app.appliance.running.find((r) => r.name === 'inbound') as InboundRole;
  const domains = new Map<string, ReceivingDomain>();
  app.appliance.services.receiving.routing.domains = { receivingDomain: async (name) => domains.get(name) };
  const smtpPort = inbound.smtp.port;
  // Bounded like every wait in a test (the library's own socket timeout is ten minutes of silence).
  const transport = nodemailer.createTransport({
    host: '127.0.0.1', port: smtpPort, secure: false, tls: { rejectUnauthorized: false },
    connectionTimeout: DEFAULT_WAIT_MS, greetingTimeout: DEFAULT_WAIT_MS, socketTimeout: 2 * DEFAULT_WAIT_MS,
  });
  return {
    app, dns, smtpPort, domains,
    addDomain(teamId, name) {
      const domain = { teamId, domainId: crypto.randomUUID(), name };
      domains.set(name, domain);
      return domain;
    },
    async send(envelope, raw) {
      const info = await transport.sendMail({ envelope, raw });
      const id = /queued as (\S+)/.exec(info.response)?.[1] ?? '';
      return { response: info.response, id };
    },
    api: (token, method, path, body) => call(app.baseUrl, method, path, { token, body }),
    async events(type) {
      const rows = await eventsRepo(app.appliance.services.database.db).after(0, 100_000);
      return rows.filter((r) => r.type === type).map((r) => ({ team_id: r.team_id, data: JSON.parse(r.data) as Record<string, any> }));
    },
    async stop() {
      transport.close();
      await app.stop();
      await dns.stop();
    },
  };
}

/** A message as an MTA would hand it over: CRLF line endings, headers first. */
export function rfc822(headers: Record<string, string>, body: string): string {
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n');
  return `${head}\r\n\r\n${body.replace(/\r?\n/g, '\r\n')}`;
}
