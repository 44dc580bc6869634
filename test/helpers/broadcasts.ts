import { spawn, type ChildProcess } from 'node:child_process';
import { simpleParser, type ParsedMail } from 'mailparser';
import { newId } from '../../core/ids.js';
import type { TestAppliance } from './appliance.js';
import type { TestDnsServer } from './dns-server.js';
import { svcBin } from './faults-svc.js';
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

/** Contacts written straight into the database, `count` of them on inbox-one.net (a fixture for big segments). */
export async function seedContacts(app: TestAppliance, teamId: string, count: number, prefix = 'r'): Promise<void> {
  const db = app.appliance.services.database.db;
  const at = new Date().toISOString();
  const rows = Array.from({ length: count }, (_, i) => {
    const email = `${prefix}${i}@inbox-one.net`;
    return {
      id: newId(), team_id: teamId, email, email_key: email, first_name: `Reader ${i}`, last_name: null,
      subscription_status: 'subscribed' as const, origin: 'api' as const, created_at: at, updated_at: at,
    };
  });
  for (let i = 0; i < rows.length; i += 90) await db.insertInto('contacts').values(rows.slice(i, i + 90)).execute();
}


/** `bin/svc start --role jobs` with only these settings (nothing from the caller's SVC_*). */
export function spawnJobsProcess(settings: Record<string, string>): ChildProcess {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_MAIL_HOSTNAME: 'mta.svc-test.net', ...settings };
  return spawn(svcBin, ['start', '--role', 'jobs'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}
