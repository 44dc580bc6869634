import type { DnsResolver } from '../../dns/resolver.js';
import type { Db } from '../../storage/sql/index.js';
import { groupCommit } from '../../storage/sql/index.js';
import { emailsRepo } from '../../storage/repos/index.js';
import type { RedisClient } from '../../storage/redis/index.js';
import { suppressionsRepo } from '../suppressions/index.js';
import { leftSandbox, type SendAllowance } from '../team/index.js';
import { teamsRepo } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';
import { missingField, notFound, ServiceError, validationError } from '../errors.js';
import type { TemplateSends } from '../templates/index.js';
import { withTemplate } from './template.js';
import { looksLikeId } from '../ids.js';
import { requestDigest, runIdempotent, type Answer, type Remember } from '../idempotency.js';
import type { Logger } from '../logger.js';
import type { RegionDirectory } from '../regions.js';
import { commitAccepted, prepareEmail, type PreparedEmail } from './accept.js';
import { loadAttachments, type AttachmentFetcher } from './attachments.js';
import { checkBulk, dayOf } from './bulk.js';
import { listEmails, type RawEmailListQuery } from './list.js';
import type { SendingDomains } from './ports.js';
import { allRecipientsInvalid, checkSandbox, recipientFates, type RecipientFate } from './recipients.js';
import { cancelEmail, rescheduleEmail } from './schedule.js';
import type { SendEmailInput } from './types.js';
import { normaliseSend } from './validate.js';
import { isOnboardingDomain, onboardingAddress, onboardingDomain } from './onboarding.js';
import { emailView, type EmailView } from './view.js';

export interface EmailsServiceDeps {
  db: Db;
  redis: RedisClient;
  clock: Clock;
  logger: Logger;
  domains: SendingDomains;
  regions: RegionDirectory;
  resolver: DnsResolver;
  simulatorDomain: string;
  maxAttachmentBytes: number;
  fetchAttachment?: AttachmentFetcher;
  /** The team's sending allowance: spent in the accepting transaction (core/team/allowance.ts). */
  allowance: SendAllowance;
  /** Tells the region's outbound queue that mail is due now (best effort; a poll backs it). */
  wake(region: string): void;
  /** Templates named by sends (core/templates). */
  templates: TemplateSends;
}

/** Who is sending: the calling key's team, id and domain pin. */
export interface Caller {
  teamId: string;
  apiKeyId: string | null;
  /** A sending_access key pinned to one domain. */
  domainId: string | null;
}

export type BatchMode = 'strict' | 'permissive';
export const maxBatch = 100;

export interface BatchAnswer {
  data: { id: string }[];
  errors?: { index: number; message: string }[];
}

const deadAddressDays = 30;

export function emailsService(deps: EmailsServiceDeps) {
  // Group commit: sends answered in the same event-loop turn share one transaction (one fsync);
  // each still gets its 200 only once its rows are on disk.
  const batcher = groupCommit(deps.db);
  const prepare = async (caller: Caller, raw: SendEmailInput, batch: BatchMemo | undefined, draft = false): Promise<PreparedEmail> => {
    const now = deps.clock.now();
    const templated = raw?.template ? await withTemplate(deps.templates, caller.teamId, raw, draft) : undefined;
    const input = templated?.input ?? raw;
    const send = normaliseSend(input, now);
    send.template = templated?.template ?? null;
    // A batch's emails nearly always share their from-domain: looked up (and its key opened) once.
    const domain = isOnboardingDomain(send.from.domain, deps.simulatorDomain)
      ? onboardingDomain(caller.teamId, send, deps.simulatorDomain)
      : await memo(batch?.domains, send.from.domain, () => deps.domains.sendingDomain(caller.teamId, send.from.domain));
    if (!domain) {
      throw validationError(403, 'from', `The ${send.from.domain} domain is not verified. Please add and verify your domain.`);
    }
    if (caller.domainId && caller.domainId !== domain.id) {
      throw validationError(403, 'from', `This API key may only send from its own domain, not from ${send.from.domain}.`);
    }
    const region = deps.regions(domain.region);
    if (region.sandbox && !(await trustedTeam(deps.db, caller.teamId))) checkSandbox(region, send.recipients, await deps.domains.verifiedDomainNames(), deps.simulatorDomain);
    const attachments = await loadAttachments(send.attachments, deps.fetchAttachment, deps.maxAttachmentBytes);
    const fates = await recipientFates({
      resolver: deps.resolver, emails: emailsRepo(deps.db), suppressions: suppressionsRepo(deps.db),
      simulatorDomain: deps.simulatorDomain, deadAddressDays,
    }, caller.teamId, send.recipients, now, batch?.recipientDomains);
    if (!batch && fates.every((f) => f.kind === 'invalid')) throw allRecipientsInvalid(send.recipients, fates);
    const prepared = prepareEmail({ teamId: caller.teamId, apiKeyId: caller.apiKeyId, send, domain, region, fates, attachments, now });
    if (!prepared.email.has_unsubscribe) {
      const hash = prepared.email.content_hash;
      const earlier = batch?.pending.get(hash) ?? 0;
      const bulk = await checkBulk(emailsRepo(deps.db), caller.teamId, hash, earlier + send.recipients.length, now);
      batch?.pending.set(hash, earlier + send.recipients.length);
      if (bulk.warn) prepared.bulkWarning = { contentHash: hash, day: dayOf(now) };
    }
    return prepared;
  };

  const commit = async (prepared: PreparedEmail[], remember: Remember, answer: unknown) => {
    await batcher.run(async (trx) => {
      const now = deps.clock.now();
      // Spent first, in the same transaction: a send refused over a cap leaves nothing behind.
      for (const [teamId, count] of chargedRecipients(prepared)) await deps.allowance.spend(trx, teamId, count, now);
      await commitAccepted(trx, prepared, now, (t) => remember(t, 200, answer));
    });
    for (const p of prepared) {
      deps.logger.info({ emailId: p.email.id, teamId: p.email.team_id, region: p.email.region, recipients: p.recipients.length, status: p.email.last_event }, 'email accepted');
      if (p.bulkWarning) deps.logger.warn({ teamId: p.email.team_id, contentHash: p.bulkWarning.contentHash }, 'team warned: the same message without unsubscribe reached the bulk threshold today');
    }
    for (const region of new Set(prepared.filter((p) => p.dueNow).map((p) => p.email.region))) deps.wake(region);
  };

  return {
    async send(caller: Caller, input: SendEmailInput, idempotencyKey?: string): Promise<Answer<{ id: string }>> {
      return runIdempotent(deps, caller.teamId, idempotencyKey, () => requestDigest('/emails', input), async (remember) => {
        const prepared = await prepare(caller, input, undefined);
        const answer = { id: prepared.email.id };
        await commit([prepared], remember, answer);
        return answer;
      });
    },

    async sendBatch(caller: Caller, inputs: SendEmailInput[], mode: BatchMode, idempotencyKey?: string): Promise<Answer<BatchAnswer>> {
      if (!Array.isArray(inputs) || inputs.length === 0) throw validationError(422, 'body', 'A batch holds 1 to 100 emails.');
      if (inputs.length > maxBatch) throw validationError(422, 'body', `A batch holds at most ${maxBatch} emails (got ${inputs.length}).`);
      return runIdempotent(deps, caller.teamId, idempotencyKey, () => requestDigest(`/emails/batch:${mode}`, inputs), async (remember) => {
        const memos: BatchMemo = { pending: new Map(), domains: new Map(), recipientDomains: new Map() };
        const prepared: PreparedEmail[] = [];
        const errors: { index: number; message: string }[] = [];
        for (const [index, input] of inputs.entries()) {
          try {
            prepared.push(await prepare(caller, input, memos));
          } catch (err) {
            if (!(err instanceof ServiceError) || mode === 'strict') throw err instanceof ServiceError ? atIndex(err, index) : err;
            errors.push({ index, message: err.message });
          }
        }
        const answer: BatchAnswer = { data: prepared.map((p) => ({ id: p.email.id })) };
        if (mode === 'permissive') answer.errors = errors;
        await commit(prepared, remember, answer);
        return answer;
      });
    },

    /**
     * A send whose rows commit in the caller's transaction (an automation's send_email step, with
     * the run's cursor): checked and prepared now, outside any transaction; `commit(trx)` spends
     * the allowance and writes the rows; `accepted()` wakes the region once that has committed.
     */
    async stage(caller: Caller, input: SendEmailInput, origin?: SendOrigin): Promise<StagedSend> {
      const prepared = await prepare(caller, input, undefined);
      if (origin) {
        prepared.email.automation_id = origin.automationId;
        prepared.email.automation_run_id = origin.runId;
        prepared.email.automation_chain = JSON.stringify(origin.chain);
      }
      return {
        id: prepared.email.id,
        async commit(trx: Db) {
          const now = deps.clock.now();
          for (const [teamId, count] of chargedRecipients([prepared])) await deps.allowance.spend(trx, teamId, count, now);
          await commitAccepted(trx, [prepared], now);
        },
        accepted() {
          deps.logger.info({ emailId: prepared.email.id, teamId: prepared.email.team_id, region: prepared.email.region, status: prepared.email.last_event }, 'email accepted');
          if (prepared.dueNow) deps.wake(prepared.email.region);
        },
      };
    },

    async get(teamId: string, id: string): Promise<EmailView> {
      const row = looksLikeId(id) ? await emailsRepo(deps.db).byId(teamId, id.toLowerCase()) : undefined;
      if (!row) throw notFound('Email');
      return emailView(row);
    },

    /** A template's test send: its current version (a draft too) through the ordinary send path. */
    async sendTemplateTest(caller: Caller, templateId: string, input: TemplateTestInput): Promise<{ id: string }> {
      if (input.to === undefined || input.to === null || (Array.isArray(input.to) && input.to.length === 0)) throw missingField('to');
      const prepared = await prepare(caller, {
        from: input.from, to: input.to, subject: input.subject, template: { id: templateId, variables: input.variables ?? undefined },
      }, undefined, true);
      const answer = { id: prepared.email.id };
      await commit([prepared], async () => {}, answer);
      deps.logger.info({ emailId: answer.id, teamId: caller.teamId, templateId: prepared.email.template_id }, 'template test sent');
      return answer;
    },

    /**
     * `svc admin send-test`: one short email through the ordinary send path, as the team (no key);
     * from the onboarding sender unless `from` is given, so a mailbox simulator address needs nothing else.
     */
    async sendTest(teamId: string, input: OperatorTestInput): Promise<{ id: string; from: string }> {
      if (typeof input.to !== 'string' || input.to.trim() === '') throw missingField('to');
      if (input.from !== undefined && typeof input.from !== 'string') throw validationError(422, 'from', '`from` must be an email address.');
      const from = (input.from as string | undefined) || `svc test <${onboardingAddress(deps.simulatorDomain)}>`;
      const now = deps.clock.now().toISOString();
      const prepared = await prepare({ teamId, apiKeyId: null, domainId: null }, {
        from, to: input.to.trim(), subject: `svc test send ${now}`, text: `A test email sent by the operator (svc admin send-test) at ${now}.`,
      }, undefined);
      const answer = { id: prepared.email.id };
      await commit([prepared], async () => {}, answer);
      deps.logger.info({ emailId: answer.id, teamId }, 'operator test send accepted');
      return { ...answer, from };
    },

    list: (teamId: string, raw: RawEmailListQuery) => listEmails(emailsRepo(deps.db), teamId, raw),
    cancel: (teamId: string, id: string) => cancelEmail(deps, teamId, id),
    reschedule: (teamId: string, id: string, scheduledAt: string | undefined) => rescheduleEmail(deps, teamId, id, scheduledAt),
  };
}

export type EmailsService = ReturnType<typeof emailsService>;

/** POST /templates/{id}/test: where to, and the values to render it with. */
export interface TemplateTestInput {
  to?: string | string[];
  variables?: Record<string, unknown> | null;
  from?: string;
  subject?: string;
}

/**
 * The automation run a staged send is made by: kept on the email, named by its svc:email.*
 * platform events. `chain`: the automations whose runs led here, this one last.
 */
export interface SendOrigin {
  automationId: string;
  runId: string;
  chain: readonly string[];
}

/** A send prepared now whose rows commit in the caller's transaction (EmailsService.stage). */
export interface StagedSend {
  id: string;
  commit(trx: Db): Promise<void>;
  accepted(): void;
}

/** `svc admin send-test`: the recipient, and a From address on one of the team's verified domains (default: the onboarding sender). */
export interface OperatorTestInput {
  to?: unknown;
  from?: unknown;
}

/** What the emails of one batch share: bulk counts so far, from-domain lookups, recipient-domain verdicts. */
interface BatchMemo {
  pending: Map<string, number>;
  domains: Map<string, Promise<unknown>>;
  recipientDomains: Map<string, Promise<RecipientFate>>;
}

function memo<T>(cache: Map<string, Promise<unknown>> | undefined, key: string, load: () => Promise<T>): Promise<T> {
  if (!cache) return load();
  let found = cache.get(key) as Promise<T> | undefined;
  if (!found) {
    found = load();
    cache.set(key, found);
  }
  return found;
}

/** Recipients svc will try to deliver, per team: what the allowance counts (refused and suppressed ones are uncharged). */
function chargedRecipients(prepared: PreparedEmail[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of prepared) {
    const charged = p.recipients.filter((r) => r.state !== 'suppressed').length;
    counts.set(p.email.team_id, (counts.get(p.email.team_id) ?? 0) + charged);
  }
  return counts;
}

/** A team the operator trusted has left the sending sandbox. */
async function trustedTeam(db: Db, teamId: string): Promise<boolean> {
  const team = await teamsRepo(db).byId(teamId);
  return !!team && leftSandbox(team);
}

/** A strict batch refuses whole, naming the item. */
function atIndex(err: ServiceError, index: number): ServiceError {
  const errors = (err.options.errors ?? []).map((e) => ({ ...e, path: `[${index}].${e.path}` }));
  return new ServiceError(err.statusCode, err.errorName, `emails[${index}]: ${err.message}`, { ...err.options, errors });
}
