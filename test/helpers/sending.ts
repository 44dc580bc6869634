import { generateKeyPairSync } from 'node:crypto';
import type { SendingDomain } from '../../core/emails/ports.js';
import type { RegionName } from '../../core/regions.js';
import type { TestAppliance } from './appliance.js';
import type { TestDnsServer } from './dns-server.js';

// Sending domains for tests. Until the domains API can create and verify a domain end to end in
// a test, this fake stands in for core/domains/lookup.ts: it makes a real 2048-bit DKIM key,
// publishes the public half in the test DNS zone (so independent verifiers can check
// signatures), and answers the sending side's lookups from memory.

export interface FakeDomainOptions {
  teamId: string;
  name: string;
  region?: RegionName;
  tls?: 'opportunistic' | 'enforced';
  selector?: string;
}

export interface FakeDomains {
  add(options: FakeDomainOptions): SendingDomain;
  all(): SendingDomain[];
}

/** Replaces the appliance's domain lookup (sending side) with in-memory verified domains. */
export function fakeSendingDomains(app: TestAppliance, dns?: TestDnsServer): FakeDomains {
  const domains: SendingDomain[] = [];
  const lookup = app.appliance.services.sending.domains;
  lookup.sendingDomain = async (teamId, fromDomain) => domains.find((d) => d.teamId === teamId && d.name === fromDomain.toLowerCase());
  lookup.verifiedDomainNames = async () => domains.map((d) => d.name);
  return {
    add(options) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const selector = options.selector ?? 'svc';
      const domain: SendingDomain = {
        id: crypto.randomUUID(), teamId: options.teamId, name: options.name, region: options.region ?? 'us-east-1',
        tls: options.tls ?? 'opportunistic', returnPathHost: `send.${options.name}`,
        dkim: { selector, privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), domain: options.name },
        openTracking: false, clickTracking: false, trackingHost: `links.${options.name}`,
      };
      const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
      // Published as two quoted strings, as the spec's DKIM row says.
      dns?.set(`${selector}._domainkey.${options.name}`, [{ type: 'TXT', value: [`v=DKIM1; k=rsa; p=${p.slice(0, 200)}`, p.slice(200)] }]);
      domains.push(domain);
      return domain;
    },
    all: () => domains,
  };
}

/**
 * A sending domain created and verified through the API, as a customer does it: POST /domains,
 * publish the returned records in the test zone, POST /domains/{id}/verify. Returns its id.
 */
export async function verifyDomainThroughApi(baseUrl: string, token: string, dns: TestDnsServer, name: string, region = 'us-east-1'): Promise<string> {
  const { call } = await import('./http.js');
  const { publish } = await import('./domain-fixtures.js');
  const created = await call(baseUrl, 'POST', '/domains', { token, body: { name, region } });
  if (created.status !== 200 && created.status !== 201) throw new Error(`POST /domains: ${JSON.stringify(created.body)}`);
  for (const r of created.body.records) if (r.record !== 'Receiving') publish(dns, name, r);
  const verified = await call(baseUrl, 'POST', `/domains/${created.body.id}/verify`, { token });
  const records = (verified.body.records ?? []) as { record: string; status: string }[];
  const sendingRecords = records.filter((r) => r.record === 'DKIM' || r.record === 'SPF');
  if (!sendingRecords.length || sendingRecords.some((r) => r.status !== 'verified')) throw new Error(`domain ${name} did not verify: ${JSON.stringify(verified.body)}`);
  return created.body.id as string;
}
