import type { DnsResolver } from '../../dns/resolver.js';
import type { Db } from '../../storage/sql/index.js';
import { emailsRepo, teamsRepo } from '../../storage/repos/index.js';
import { suppressionKey, suppressionsRepo } from '../suppressions/index.js';
import { leftSandbox, type SendAllowance } from '../team/index.js';
import { ServiceError, validationError } from '../errors.js';
import type { RegionDirectory } from '../regions.js';
import { commitAccepted, prepareEmail, type PreparedEmail } from './accept.js';
import type { SendingDomain, SendingDomains } from './ports.js';
import { addressKey, type ParsedMailboxes } from './addresses.js';
import { checkSandbox, recipientFates, type RecipientCheckDeps, type RecipientFate } from './recipients.js';
import { daysBefore } from '../time.js';
import type { SendEmailInput } from './types.js';
import { normaliseSend } from './validate.js';

// Campaign sends (broadcasts, and automations next) through the ordinary send path: each
// recipient becomes one ordinary email, checked by the same rules as POST /emails (shapes, the
// verified from-domain, recipient domains, dead addresses, the suppression list), charged to the
// team's allowance and written with its acceptance events — but in the caller's transaction, so
// a durable work step commits a page of emails together with its cursor.

export interface CampaignSenderDeps {
  db: Db;
  domains: SendingDomains;
  regions: RegionDirectory;
  resolver: DnsResolver;
  simulatorDomain: string;
  allowance: SendAllowance;
  /** Tells the region's outbound queue that mail is due now (best effort; a poll backs it). */
  wake(region: string): void;
}

/** One recipient's message: a send of one `to`, tied to the campaign that made it. */
export interface CampaignMessage {
  input: SendEmailInput;
  broadcastId: string;
}

/** A page of campaign emails, prepared: the emails to write and the recipients the sandbox kept out. */
export interface CampaignPage {
  prepared: PreparedEmail[];
  /** Index (in the messages given) of each message the region's sandbox refused. */
  sandboxed: Set<number>;
  /** The email id of each message written, by its index. */
  emailIds: Map<number, string>;
}

const deadAddressDays = 30;

export function campaignSender(deps: CampaignSenderDeps) {
  /** The team's verified sending domain for a from address, or a 422 naming `from`. */
  async function domainFor(teamId: string, fromDomain: string): Promise<SendingDomain> {
    const domain = await deps.domains.sendingDomain(teamId, fromDomain);
    if (!domain) throw validationError(422, 'from', `The ${fromDomain} domain is not verified. Please add and verify your domain.`);
    return domain;
  }

  return {
    /** Whether the team has a verified sending domain for this from-domain (the send gate). */
    hasSendingDomain: async (teamId: string, fromDomain: string) => !!(await deps.domains.sendingDomain(teamId, fromDomain)),

    /**
     * Checks and prepares one email per message (each message has one recipient). Reads only; the
     * rows are written by `commit`. Recipient domains are judged once per page.
     */
    async prepare(teamId: string, messages: readonly CampaignMessage[], now: Date): Promise<CampaignPage> {
      const page: CampaignPage = { prepared: [], sandboxed: new Set(), emailIds: new Map() };
      if (messages.length === 0) return page;
      const parsed: ParsedMailboxes = new Map();
      const sends = messages.map((m) => normaliseSend(m.input, now, parsed));
      const domain = await domainFor(teamId, sends[0]!.from.domain);
      const region = deps.regions(domain.region);
      const sandboxed = region.sandbox && !(await trusted(deps.db, teamId));
      const verifiedNames = sandboxed ? await deps.domains.verifiedDomainNames() : [];
      const byDomain = new Map<string, Promise<RecipientFate>>();
      const checkDeps = { resolver: deps.resolver, ...(await pageLookups(deps.db, teamId, sends, now)), simulatorDomain: deps.simulatorDomain, deadAddressDays };
      const fates = await Promise.all(sends.map((send) => recipientFates(checkDeps, teamId, send.recipients, now, byDomain)));
      sends.forEach((send, i) => {
        if (sandboxed && !allowedBySandbox(region, send.recipients, verifiedNames, deps.simulatorDomain)) {
          page.sandboxed.add(i);
          return;
        }
        const prepared = prepareEmail({
          teamId, apiKeyId: null, send, domain, region, fates: fates[i]!, attachments: [], now,
        });
        prepared.email.broadcast_id = messages[i]!.broadcastId;
        page.prepared.push(prepared);
        page.emailIds.set(i, prepared.email.id);
      });
      return page;
    },

    /** Spends the allowance and writes the page's emails and their events, in the caller's transaction. */
    async commit(trx: Db, teamId: string, page: CampaignPage, now: Date): Promise<void> {
      const charged = page.prepared.reduce((n, p) => n + p.recipients.filter((r) => r.state !== 'suppressed').length, 0);
      await deps.allowance.spend(trx, teamId, charged, now);
      await commitAccepted(trx, page.prepared, now);
    },

    /** After the commit: wakes the regions the page's due emails wait in. */
    wakeFor(page: CampaignPage): void {
      for (const region of new Set(page.prepared.filter((p) => p.dueNow).map((p) => p.email.region))) deps.wake(region);
    },
  };
}

export type CampaignSender = ReturnType<typeof campaignSender>;

/**
 * The suppression list and the dead-address records for a whole page, read in one statement each
 * (per 500 addresses): the per-recipient checks then look them up in memory instead of querying
 * twice per recipient. Read outside the page's transaction, as the single checks are.
 */
async function pageLookups(db: Db, teamId: string, sends: readonly { recipients: readonly { address: string }[] }[], now: Date): Promise<Pick<RecipientCheckDeps, 'suppressions' | 'emails'>> {
  const addresses = [...new Set(sends.flatMap((s) => s.recipients.map((r) => r.address)))];
  const listed = new Map((await suppressionsRepo(db).byEmailKeys(teamId, [...new Set(addresses.map(suppressionKey))])).map((r) => [r.email_key, r]));
  const rejectedFor = new Map<string, string[]>();
  for (const r of await emailsRepo(db).rejectionsOf([...new Set(addresses.map(addressKey))], daysBefore(now, deadAddressDays))) {
    const teams = rejectedFor.get(r.address);
    if (teams) teams.push(r.team_id);
    else rejectedFor.set(r.address, [r.team_id]);
  }
  return {
    suppressions: { byEmailKey: async (_teamId, emailKey) => listed.get(emailKey) },
    emails: {
      rejections: async (address, ownTeam) => {
        const teams = rejectedFor.get(address) ?? [];
        return { own: teams.includes(ownTeam), teams: teams.length };
      },
    },
  };
}

async function trusted(db: Db, teamId: string): Promise<boolean> {
  const team = await teamsRepo(db).byId(teamId);
  return !!team && leftSandbox(team);
}

function allowedBySandbox(region: Parameters<typeof checkSandbox>[0], recipients: Parameters<typeof checkSandbox>[1], verified: readonly string[], simulator: string): boolean {
  try {
    checkSandbox(region, recipients, verified, simulator);
    return true;
  } catch (err) {
    if (err instanceof ServiceError) return false;
    throw err;
  }
}
