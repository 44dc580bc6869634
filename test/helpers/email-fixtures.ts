import { eventsRepo } from '../../storage/repos/index.js';
import type { TestAppliance } from './appliance.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';

export interface StoredEmailEvent {
  type: string;
  created_at: string;
  data: Record<string, any>;
}

/** Every outbox event about one email, in order. */
export async function eventsOf(app: TestAppliance, emailId: string): Promise<StoredEmailEvent[]> {
  const rows = await eventsRepo(app.appliance.services.database.db).after(0, 100_000);
  return rows
    .map((r) => ({ type: r.type, created_at: r.created_at, data: JSON.parse(r.data) as Record<string, any> }))
    .filter((e) => e.data.email_id === emailId);
}

/** A DNS zone with mail-receiving domains whose MX is 127.0.0.1, and some that take no mail. */
export async function mailZone(receiving: string[] = ['inbox-one.net', 'inbox-two.net']): Promise<TestDnsServer> {
  const dns = await startDnsServer();
  for (const domain of receiving) {
    dns.set(domain, [{ type: 'MX', exchange: `mx.${domain}`, priority: 10 }]);
    dns.set(`mx.${domain}`, [{ type: 'A', value: '127.0.0.1' }]);
  }
  // A domain whose null MX says it takes no mail.
  dns.set('nomail-here.net', [{ type: 'MX', exchange: '.', priority: 0 }]);
  return dns;
}

