import { startTestAppliance, type TestAppliance } from './appliance.js';
import { startDnsServer, type TestDnsServer, type ZoneRecord } from './dns-server.js';
import { call, type CallResult } from './http.js';
import { testClock, type TestClock } from './test-clock.js';
import type { Role } from '../../bin/appliance.js';

export interface WireRecord {
  record: string;
  name: string;
  type: 'TXT' | 'CNAME' | 'MX';
  value: string;
  status: string;
  priority?: number;
  optional?: true;
}

export interface DomainsRig {
  app: TestAppliance;
  dns: TestDnsServer;
  clock: TestClock;
  api(token: string, method: string, path: string, body?: unknown): Promise<CallResult>;
  stop(): Promise<void>;
}

// Each region gets hosts of its own so a record's target shows which region it came from.
export const regionHosts = {
  'us-east-1': { mail_from_host: 'bounces.us.svc-host.net', inbound_host: 'inbound.us.svc-host.net', tracking_host: 'track.us.svc-host.net' },
  'eu-west-1': { mail_from_host: 'bounces.eu.svc-host.net', inbound_host: 'inbound.eu.svc-host.net', tracking_host: 'track.eu.svc-host.net' },
  'sa-east-1': { mail_from_host: 'bounces.sa.svc-host.net', inbound_host: 'inbound.sa.svc-host.net', tracking_host: 'track.sa.svc-host.net' },
};

/** A real appliance whose resolver is a loopback DNS server the test edits, on a clock the test moves. */
export async function startDomainsRig(env: Record<string, string> = {}, roles: Role[] = ['api', 'jobs']): Promise<DomainsRig> {
  const dns = await startDnsServer();
  const clock = testClock();
  const app = await startTestAppliance({
    clock, roles,
    env: { SVC_DNS_SERVERS: dns.address, SVC_DNS_TIMEOUT_MS: '1000', SVC_RATE_LIMIT_BURST: '1000', SVC_RATE_LIMIT_PER_SECOND: '1000', 
      // The re-check runs when a test says so (runNow), not on its own in the middle of one (only at New Year).
      SVC_DOMAINS_RECHECK_CRON: '0 0 1 1 *', SVC_MAIL_HOSTNAME: 'mta.svc-host.net', SVC_REGIONS: JSON.stringify(regionHosts), ...env },
  });
  return {
    app, dns, clock,
    api: (token, method, path, body) => call(app.baseUrl, method, path, { token, body }),
    async stop() {
      await app.stop();
      await dns.stop();
    },
  };
}

/** The absolute name of a record the API gave relative to `zone`. */
export const absolute = (zone: string, name: string): string => (name === '@' ? zone : `${name}.${zone}`);

/** The character-strings of a TXT value given as quoted strings (`"a" "b"`), or the bare text. */
export function txtStrings(value: string): string[] {
  const quoted = [...value.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
  return quoted.length > 0 ? quoted : [value];
}

/**
 * Publishes a record exactly as the API returned it: beside whatever else is at that name, except a
 * CNAME, which replaces what is there (DNS allows nothing beside a CNAME).
 */
export function publish(dns: TestDnsServer, zone: string, r: WireRecord): void {
  if (r.type === 'CNAME') dns.set(absolute(zone, r.name), [toZone(r)]);
  else dns.add(absolute(zone, r.name), toZone(r));
}

export function toZone(r: WireRecord): ZoneRecord {
  switch (r.type) {
    case 'TXT':
      return { type: 'TXT', value: txtStrings(r.value) };
    case 'CNAME':
      return { type: 'CNAME', value: r.value.replace(/\.$/, '') };
    case 'MX':
      return { type: 'MX', exchange: r.value.replace(/\.$/, ''), priority: r.priority ?? 10 };
  }
}

export const find = (records: WireRecord[], record: string, type?: string): WireRecord =>
  records.find((r) => r.record === record && (!type || r.type === type))!;
