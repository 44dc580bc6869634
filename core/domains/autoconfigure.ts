import type { CloudflareClient, CloudflareError, CloudflareRecord, CloudflareZone } from '../../net/cloudflare.js';
import { dkimKeyOf, joinTxt, sameHost } from '../../dns/verify.js';
import { domainsRepo, type DomainRow } from '../../storage/repos/index.js';
import { missingField, notFound, ServiceError, validationError } from '../errors.js';
import { recordsOf, type DomainsDeps } from './context.js';
import { zonedName } from './names.js';
import { isRequired, type PlannedRecord } from './records.js';

export interface AutoconfigureInput {
  /** Only `cloudflare` is supported. */
  provider?: string;
  /** A Cloudflare API token scoped to this domain's zone; omitted, a kept token is used. */
  api_token?: string;
  /** Keep the token (sealed) for later calls instead of forgetting it after writing. */
  keep_token?: boolean;
}

export interface AutoconfiguredRecord {
  record: PlannedRecord['record'];
  name: string;
  type: PlannedRecord['type'];
  value: string;
  priority?: number;
}

export interface AutoconfigureResult {
  object: 'domain_autoconfigure';
  id: string;
  provider: 'cloudflare';
  zone: { id: string; name: string };
  written: AutoconfiguredRecord[];
  /** Already published with the right value. */
  unchanged: AutoconfiguredRecord[];
  /** Records at svc's names that svc never overwrites; publish or resolve these yourself. */
  conflicts: (AutoconfiguredRecord & { existing: { type: string; content: string }[] })[];
  token_kept: boolean;
}

// Cloudflare's Global API Key: 37 hex digits. It reaches every zone of the account: refused.
const globalApiKey = /^[0-9a-f]{37}$/i;

/**
 * Writes the domain's records through Cloudflare's API (spec, POST /domains/{id}/autoconfigure):
 * only with a token that sees exactly this zone, only records of enabled capabilities (plus the
 * DKIM records), never over anything already at those names. The token is forgotten afterwards
 * unless `keep_token`; svc cannot revoke it at Cloudflare (that needs a user-level permission a
 * zone-scoped token does not have), so the answer says to delete it there.
 */
export function domainAutoconfigure(deps: DomainsDeps) {
  const repo = domainsRepo(deps.db);
  return {
    async run(teamId: string, id: string, input: AutoconfigureInput): Promise<AutoconfigureResult> {
      const domain = await repo.byId(teamId, id);
      if (!domain) throw notFound('Domain');
      if (domain.released_at) throw new ServiceError(409, 'resource_locked', 'This domain was claimed by another team.');
      if (input.provider !== undefined && input.provider !== 'cloudflare') {
        throw validationError(422, 'provider', 'The `provider` field must be `cloudflare`: it is the one DNS provider supported.');
      }
      const token = input.api_token ?? (domain.provider_token ? deps.secretBox.open(domain.provider_token) : undefined);
      if (!token) throw missingField('api_token');
      if (globalApiKey.test(token)) throw tokenRefused('a Global API Key reaches every zone of the account; create an API token for this zone only.');
      const client = deps.cloudflare(token);
      const zone = await scopedZone(client, zonedName(domain.name).zone);
      const keys = await repo.keys(id);
      const wanted = recordsOf(deps, domain, keys).filter((r) => shouldWrite(r, domain));
      const result: AutoconfigureResult = { object: 'domain_autoconfigure', id, provider: 'cloudflare', zone, written: [], unchanged: [], conflicts: [], token_kept: !!input.keep_token };
      for (const record of wanted) await place(client, zone, record, result);
      await repo.update(id, { provider_token: input.keep_token ? deps.secretBox.seal(token) : null });
      deps.logger.info({ domainId: id, teamId, zone: zone.name, written: result.written.length, conflicts: result.conflicts.length, tokenKept: result.token_kept }, 'domain autoconfigured');
      return result;
    },

    /** DELETE /domains/{id}/autoconfigure/credential: forgets a kept token. */
    async forgetCredential(teamId: string, id: string): Promise<{ object: 'autoconfigure_credential'; id: string; deleted: true }> {
      const domain = await repo.byId(teamId, id);
      if (!domain) throw notFound('Domain');
      if (domain.provider_token) {
        await repo.update(id, { provider_token: null });
        deps.logger.info({ domainId: id, teamId }, 'autoconfigure token forgotten');
      }
      return { object: 'autoconfigure_credential', id, deleted: true };
    },
  };
}

export type DomainAutoconfigure = ReturnType<typeof domainAutoconfigure>;

/** DKIM records always (the new key of a rotation too); the others only once their capability is on. */
const shouldWrite = (r: PlannedRecord, domain: DomainRow) => r.need === 'ownership' || r.need === 'rotation' || isRequired(r, domain);

async function scopedZone(client: CloudflareClient, zoneName: string): Promise<CloudflareZone> {
  try {
    const verified = await client.verifyToken();
    if (verified.status !== 'active') throw tokenRefused(`Cloudflare reports the token as ${verified.status}.`);
    const { zones, total } = await client.zones();
    if (total !== 1 || zones.length !== 1) {
      throw tokenRefused(`the token reaches ${total} zones; it must be scoped to the zone ${zoneName} only.`);
    }
    if (zones[0]!.name.toLowerCase() !== zoneName) throw tokenRefused(`the token is scoped to ${zones[0]!.name}, not to ${zoneName}.`);
    return { id: zones[0]!.id, name: zones[0]!.name };
  } catch (err) {
    throw providerError(err);
  }
}

async function place(client: CloudflareClient, zone: CloudflareZone, record: PlannedRecord, result: AutoconfigureResult): Promise<void> {
  const shown: AutoconfiguredRecord = {
    record: record.record, name: record.name, type: record.type, value: record.value, ...(record.priority !== undefined ? { priority: record.priority } : {}),
  };
  try {
    const existing = await client.records(zone.id, record.fqdn);
    if (existing.some((e) => samePublished(record, e))) {
      result.unchanged.push(shown);
      return;
    }
    const blocking = existing.filter((e) => blocks(record, e));
    if (blocking.length > 0) {
      result.conflicts.push({ ...shown, existing: blocking.map((e) => ({ type: e.type, content: e.content })) });
      return;
    }
    await client.createRecord(zone.id, {
      type: record.type, name: record.fqdn, content: record.value, ...(record.priority !== undefined ? { priority: record.priority } : {}),
      comment: 'svc',
    });
    result.written.push(shown);
  } catch (err) {
    throw providerError(err);
  }
}

function samePublished(record: PlannedRecord, e: CloudflareRecord): boolean {
  if (e.type !== record.type) return false;
  if (record.type !== 'TXT') return sameHost(e.content, record.check.expected);
  const text = joinTxt(unquote(e.content));
  return record.check.match === 'dkim_key' ? dkimKeyOf(text) === dkimKeyOf(record.check.expected) : text.trim() === record.check.expected;
}

/** What at the same name svc would clash with; anything else may live beside its record. */
function blocks(record: PlannedRecord, e: CloudflareRecord): boolean {
  if (record.type === 'CNAME' || e.type === 'CNAME') return true;
  if (record.type === 'MX') return e.type === 'MX';
  if (e.type !== 'TXT') return false;
  return record.record === 'DKIM' || /^v=spf1\b/i.test(joinTxt(unquote(e.content)));
}

/** Cloudflare shows TXT content as published: one or more quoted strings, or bare text. */
function unquote(content: string): string[] {
  const quoted = [...content.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
  return quoted.length > 0 ? quoted : [content];
}

const tokenRefused = (why: string) => validationError(422, 'api_token', `The API token was refused: ${why}`);

const isProviderError = (err: unknown): err is CloudflareError =>
  err instanceof Error && err.name === 'CloudflareError' && typeof (err as CloudflareError).status === 'number';

function providerError(err: unknown): unknown {
  if (!isProviderError(err)) return err;
  if (err.status === 401 || err.status === 403) return tokenRefused(`Cloudflare answered ${err.status} (${err.message}).`);
  return new ServiceError(503, 'service_unavailable', `Cloudflare did not complete the request: ${err.message}`);
}
