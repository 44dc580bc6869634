import { readdirSync } from 'node:fs';
import { startTestAppliance, type TestAppliance } from './appliance.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { startFakeMx, type FakeMx } from './fake-mx.js';
import { call, type CallResult } from './http.js';
import type { InboundRole } from '../../bin/roles/inbound.js';
import type { ReceivingDomain } from '../../core/receiving/ports.js';

// The hostile-input rig: a real appliance with the api, inbound and outbound roles on loopback.
// Everything the outbound MTA could send goes to one fake MX (it is the smarthost, and the test
// zone names it as the MX of the domains a relay trick aims at), so "nothing delivered anywhere"
// is checked where it would show: no outbound rows in SQLite and nothing at the fake MX.
// Receiving domains come from an in-memory map, as in test/inbound/rig.ts.

export interface HostileRig {
  app: TestAppliance;
  dns: TestDnsServer;
  mx: FakeMx;
  smtpPort: number;
  addDomain(teamId: string, name: string): ReceivingDomain;
  api(token: string, method: string, path: string, body?: unknown): Promise<CallResult>;
  /** Rows that would make the outbound MTA send something: emails and their recipients. */
  outboundRows(): Promise<{ emails: number; recipients: number }>;
  /** Received records of every team (kept or dropped). */
  receivedRows(): Promise<number>;
  /** Files in the spool (raw messages, incoming or kept). */
  spoolFiles(): number;
  stop(): Promise<void>;
}

/** Domains a relay attempt names: each has an MX in the test zone that leads to the fake MX. */
export const foreignDomains = ['other-victim.net', 'b-victim.net', 'a-victim.net', 'victim-target.net'];

export async function startHostileRig(env: Record<string, string> = {}): Promise<HostileRig> {
  const dns = await startDnsServer();
  const mx = await startFakeMx({ dns: dns.address, noTls: true });
  for (const name of foreignDomains) {
    dns.set(name, [{ type: 'MX', exchange: `mx.${name}`, priority: 10 }]);
    dns.set(`mx.${name}`, [{ type: 'A', value: '127.0.0.1' }]);
  }
  const app = await startTestAppliance({
    roles: ['api', 'inbound', 'outbound'],
    env: {
      SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: '0', SVC_DNS_SERVERS: dns.address, SVC_DNS_TIMEOUT_MS: '500',
      SVC_MAIL_HOSTNAME: 'mx.svc-test.net', SVC_RATE_LIMIT_BURST: '100000', SVC_RATE_LIMIT_PER_SECOND: '100000',
      SVC_OUTBOUND_RELAY: `127.0.0.1:${mx.port}`, SVC_OUTBOUND_PORT: String(mx.port),
      ...env,
    },
  });
  const inbound = app.appliance.running.find((r) => r.name === 'inbound') as InboundRole;
  const domains = new Map<string, ReceivingDomain>();
  app.appliance.services.receiving.routing.domains = { receivingDomain: async (name) => domains.get(name) };
  const db = app.appliance.services.database.db;
  const count = async (table: 'emails' | 'email_recipients' | 'received_emails') =>
    Number((await db.selectFrom(table).select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return {
    app, dns, mx, smtpPort: inbound.smtp.port,
    addDomain(teamId, name) {
      const domain = { teamId, domainId: crypto.randomUUID(), name };
      domains.set(name, domain);
      return domain;
    },
    api: (token, method, path, body) => call(app.baseUrl, method, path, { token, body }),
    outboundRows: async () => ({ emails: await count('emails'), recipients: await count('email_recipients') }),
    receivedRows: () => count('received_emails'),
    spoolFiles: () => readdirSync(app.appliance.services.receiving.spool.dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length,
    async stop() {
      await app.stop();
      await mx.stop();
      await dns.stop();
    },
  };
}
