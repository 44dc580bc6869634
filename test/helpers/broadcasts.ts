import { simpleParser, type ParsedMail } from 'mailparser';
import type { TestAppliance } from './appliance.js';
import type { TestDnsServer } from './dns-server.js';
import { call } from './http.js';
import { verifyDomainThroughApi } from './sending.js';

// Broadcast fixtures: a team ready to send campaigns (postal address, verified domain, a segment
// by filter over its contacts), contacts made through the API, and the messages a fake MX took.

export interface CampaignTeam {
  teamId: string;
  token: string;
  segmentId: string;
  domain: string;
}

export const postalAddress = { line1: '1 Main St', city: 'Berlin', postal_code: '10115', country: 'DE' };

/** A team with a postal address, a verified `domain` and a segment of every contact on `inbox-one.net`. */
export async function campaignTeam(app: TestAppliance, dns: TestDnsServer, name: string, domain: string): Promise<CampaignTeam> {
  const { teamId, token } = await app.newTeam(name);
  const patched = await call(app.baseUrl, 'PATCH', '/team', { token, body: { sender_name: name, postal_address: postalAddress } });
  if (patched.status !== 200) throw new Error(`PATCH /team: ${JSON.stringify(patched.body)}`);
  await verifyDomainThroughApi(app.baseUrl, token, dns, domain);
  const segment = await call(app.baseUrl, 'POST', '/segments', {
    token, body: { name: `${name} readers`, filter: { all: [{ field: 'email', op: 'contains', value: '@inbox-one.net' }] } },
  });
  if (segment.status !== 201) throw new Error(`POST /segments: ${JSON.stringify(segment.body)}`);
  return { teamId, token, segmentId: segment.body.id as string, domain };
}

export async function addContact(app: TestAppliance, token: string, body: Record<string, unknown>): Promise<string> {
  const r = await call(app.baseUrl, 'POST', '/contacts', { token, body });
  if (r.status !== 201) throw new Error(`POST /contacts: ${JSON.stringify(r.body)}`);
  return r.body.id as string;
}

export const parseMessage = (raw: Buffer): Promise<ParsedMail> => simpleParser(raw);

/** The fan-out's durable work, run in the test's process until nothing is due. */
export async function drainWork(app: TestAppliance): Promise<void> {
  while ((await app.appliance.services.work.runDue()) > 0);
}
