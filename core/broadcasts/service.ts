import { broadcastsRepo, engagementRepo, type BroadcastRecipientView, type BroadcastRow, type BroadcastStatus, type RecipientSelection } from '../../storage/repos/index.js';
import { inWriteTransaction, type Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { failedChecks, runContentChecks, type ContentCheck } from '../content-checks/index.js';
import { invalidParameter, notFound, ServiceError, validationError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { parseScheduledAt } from '../scheduling.js';
import { topicsRepo } from '../../storage/repos/index.js';
import { enqueueFanOut } from './release.js';
import { contentOf, gateRefusal, runGate, type GateCheck, type GateDeps } from './gate.js';
import { broadcastColumns, checkSendFlags, type BroadcastFields, type CreateBroadcastInput, type SendBroadcastInput } from './input.js';
import { clickedLinkOf, excludeMachineOf, type ClickedLink } from './engagement.js';
import { broadcastListItem, broadcastView, type BroadcastListItem, type BroadcastView } from './view.js';

// The broadcasts API (spec Broadcasts; bodies as the resend SDK sends them): drafts are created,
// changed and deleted; a send runs the gate, then the content checks, then moves the draft to
// queued (or scheduled) and enqueues its fan-out in the same transaction.

export interface BroadcastsDeps extends GateDeps {
  clock: Clock;
  logger: Logger;
}

export type RecipientType = 'sent' | 'delivered' | 'opened' | 'clicked' | 'bounced' | 'complained' | 'unsubscribed' | 'suppressed';
export const recipientTypes: readonly RecipientType[] = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed', 'suppressed'];

export interface RecipientItem {
  id: string;
  contact_id: string | null;
  email: string;
  email_id: string | null;
  /** Why the member got no email (type `suppressed`): unsubscribed, not_subscribed, topic_opt_out, suppressed, sandbox. */
  reason?: string | null;
  bounce_type?: 'permanent' | 'transient' | 'undetermined';
  /** Opens (type `opened`) or clicks (type `clicked`) of the recipient's email. */
  count?: number;
  /** Type `clicked`: each link the recipient clicked, with its clicks. */
  clicked_links?: { url: string; clicks: number }[];
}

export interface ChecklistView {
  object: 'broadcast_checklist';
  ready: boolean;
  checks: GateCheck[];
}

export interface ContentChecksView {
  object: 'broadcast_checks';
  passed: boolean;
  checks: ContentCheck[];
}

export type BroadcastRef = { object: 'broadcast'; id: string };

export function broadcastsService(deps: BroadcastsDeps) {
  const log = deps.logger.child({ area: 'broadcasts' });
  const repo = () => broadcastsRepo(deps.db);

  async function load(teamId: string, id: string): Promise<BroadcastRow> {
    const row = looksLikeId(id) ? await repo().byId(teamId, id.toLowerCase()) : undefined;
    if (!row) throw notFound('Broadcast');
    return row;
  }

  async function checkTopic(db: Db, teamId: string, topicId: string | null | undefined): Promise<void> {
    if (topicId && !(await topicsRepo(db).byId(teamId, topicId))) throw invalidParameter('topic_id', `Topic \`${topicId}\` not found.`);
  }

  async function contentChecks(b: BroadcastRow): Promise<ContentCheck[]> {
    const content = await contentOf(deps.templates, b);
    return runContentChecks({
      subject: content.subject, preview_text: b.preview_text, html: content.html, text: content.text,
      variables: await repo().propertyKeys(b.team_id),
    });
  }

  /**
   * Everything a send asks before it writes: the gate (first failure), the schedule, the content
   * checks (a fail stops unless acknowledged). Answers the status the broadcast moves to.
   */
  async function admit(b: BroadcastRow, input: SendBroadcastInput): Promise<{ status: BroadcastStatus; scheduledAt: string | null }> {
    const now = deps.clock.now();
    const scheduledAt = input.scheduled_at === undefined || input.scheduled_at === null ? null : parseScheduledAt(String(input.scheduled_at), now);
    const refusal = gateRefusal(await runGate(deps, b, await contentOf(deps.templates, b)));
    if (refusal) throw refusal;
    const failed = failedChecks(await contentChecks(b));
    if (failed.length && input.acknowledge_checks !== true) {
      throw new ServiceError(422, 'validation_error', `The broadcast fails ${failed.length} content check${failed.length === 1 ? '' : 's'}: ${failed.map((c) => c.name).join(', ')}. Fix them, or send with \`acknowledge_checks: true\`.`, {
        details: { checks: failed },
      });
    }
    return { status: scheduledAt ? 'scheduled' : 'queued', scheduledAt };
  }

  /** In the caller's transaction: the draft becomes queued or scheduled and its fan-out is enqueued. */
  async function dispatch(trx: Db, b: BroadcastRow, admitted: { status: BroadcastStatus; scheduledAt: string | null }): Promise<void> {
    const now = deps.clock.now().toISOString();
    if (!(await broadcastsRepo(trx).transition(b.team_id, b.id, ['draft'], { status: admitted.status, scheduled_at: admitted.scheduledAt, updated_at: now }))) {
      throw notDraft(b.status === 'draft' ? 'queued' : b.status, 'sent');
    }
    await enqueueFanOut(trx, b.team_id, b.id, admitted.scheduledAt ?? now);
  }

  return {
    async create(teamId: string, input: CreateBroadcastInput): Promise<{ id: string }> {
      checkSendFlags(input);
      const now = deps.clock.now().toISOString();
      const row: BroadcastRow = {
        id: newId(), team_id: teamId, name: 'Untitled', segment_id: null, topic_id: null, template_id: null, from_header: null, subject: null,
        reply_to_json: null, preview_text: null, html: null, text: null, status: 'draft', scheduled_at: null, sent_at: null,
        recipients_sent: 0, recipients_excluded: 0, created_at: now, updated_at: now, ...broadcastColumns(input, true),
      };
      await checkTopic(deps.db, teamId, row.topic_id);
      // With `send`, nothing is created when the gate or the checks refuse.
      const admitted = input.send === true ? await admit(row, input) : undefined;
      await inWriteTransaction(deps.db, async (trx) => {
        await broadcastsRepo(trx).insert(row);
        if (admitted) await dispatch(trx, row, admitted);
      });
      log.info({ broadcastId: row.id, teamId, status: admitted?.status ?? 'draft' }, 'broadcast created');
      return { id: row.id };
    },

    async list(teamId: string, raw: RawPageQuery): Promise<ListEnvelope<BroadcastListItem>> {
      const page = await repo().list(teamId, parsePageQuery(raw));
      return listOf(page.data.map(broadcastListItem), page.has_more);
    },

    get: async (teamId: string, id: string): Promise<BroadcastView> => broadcastView(await load(teamId, id)),

    async update(teamId: string, id: string, input: BroadcastFields): Promise<{ id: string }> {
      const b = await load(teamId, id);
      const columns = broadcastColumns(input, false);
      await checkTopic(deps.db, teamId, columns.topic_id);
      if (!(await repo().transition(teamId, b.id, ['draft'], { ...columns, updated_at: deps.clock.now().toISOString() }))) throw notDraft(b.status, 'updated');
      return { id: b.id };
    },

    async remove(teamId: string, id: string): Promise<BroadcastRef & { deleted: true }> {
      const b = await load(teamId, id);
      if (!(await repo().removeDraft(teamId, b.id))) throw notDraft(b.status, 'deleted');
      log.info({ broadcastId: b.id, teamId }, 'broadcast deleted');
      return { object: 'broadcast', id: b.id, deleted: true };
    },

    async send(teamId: string, id: string, input: SendBroadcastInput): Promise<{ id: string }> {
      const b = await load(teamId, id);
      if (b.status !== 'draft') throw notDraft(b.status, 'sent');
      const admitted = await admit(b, input ?? {});
      await inWriteTransaction(deps.db, (trx) => dispatch(trx, b, admitted));
      log.info({ broadcastId: b.id, teamId, status: admitted.status, scheduledAt: admitted.scheduledAt }, 'broadcast send accepted');
      return { id: b.id };
    },

    async cancel(teamId: string, id: string): Promise<BroadcastRef> {
      const b = await load(teamId, id);
      const now = deps.clock.now().toISOString();
      // From scheduled or queued it never starts; while sending, the fan-out stops at its next page.
      if (!(await repo().transition(teamId, b.id, ['scheduled', 'queued', 'sending'], { status: 'canceled', updated_at: now }))) {
        throw validationError(422, undefined, `Only a scheduled, queued or sending broadcast can be canceled; this one is ${b.status}.`);
      }
      log.info({ broadcastId: b.id, teamId, from: b.status }, 'broadcast canceled');
      return { object: 'broadcast', id: b.id };
    },

    async duplicate(teamId: string, id: string): Promise<BroadcastRef> {
      const b = await load(teamId, id);
      const now = deps.clock.now().toISOString();
      const copy: BroadcastRow = { ...b, id: newId(), status: 'draft', scheduled_at: null, sent_at: null, recipients_sent: 0, recipients_excluded: 0, created_at: now, updated_at: now };
      await repo().insert(copy);
      return { object: 'broadcast', id: copy.id };
    },

    async checklist(teamId: string, id: string): Promise<ChecklistView> {
      const b = await load(teamId, id);
      const checks = await runGate(deps, b, await contentOf(deps.templates, b));
      return { object: 'broadcast_checklist', ready: checks.every((c) => c.status === 'pass'), checks };
    },

    async checks(teamId: string, id: string): Promise<ContentChecksView> {
      const checks = await contentChecks(await load(teamId, id));
      return { object: 'broadcast_checks', passed: failedChecks(checks).length === 0, checks };
    },

    async recipients(teamId: string, id: string, raw: RawPageQuery & { type?: string; email?: string; bounce_type?: string; exclude_machine?: string }): Promise<ListEnvelope<RecipientItem>> {
      const b = await load(teamId, id);
      const type = (raw.type ?? 'sent') as RecipientType;
      if (!recipientTypes.includes(type)) throw invalidParameter('type', `\`type\` must be one of ${recipientTypes.join(', ')}.`);
      const humanOnly = excludeMachineOf(raw.exclude_machine);
      const page = await repo().recipients(b.id, selectionOf(type, raw.bounce_type, humanOnly), raw.email, parsePageQuery(raw));
      const links = type === 'clicked'
        ? await engagementRepo(deps.db).linksOfEmails(b.id, page.data.flatMap((r) => (r.email_id ? [r.email_id] : [])))
        : undefined;
      return listOf(page.data.map((r) => ({
        id: r.contact_id, contact_id: r.contact_id, email: r.email, email_id: r.email_id,
        ...(type === 'suppressed' ? { reason: r.reason ?? 'suppressed' } : {}),
        ...(type === 'bounced' ? { bounce_type: bounceTypeOf(r.bounce_type) } : {}),
        ...(type === 'opened' ? { count: hits(r, 'opens', humanOnly) } : {}),
        ...(links ? {
          count: hits(r, 'clicks', humanOnly),
          clicked_links: (links.get(r.email_id ?? '') ?? [])
            .map((l) => ({ url: l.url, clicks: humanOnly ? l.clicks - l.machine_clicks : l.clicks }))
            .filter((l) => l.clicks > 0),
        } : {}),
      })), page.has_more);
    },

    async clickedLinks(teamId: string, id: string, raw: RawPageQuery & { exclude_machine?: string }): Promise<ListEnvelope<ClickedLink>> {
      const b = await load(teamId, id);
      const humanOnly = excludeMachineOf(raw.exclude_machine);
      const page = await engagementRepo(deps.db).linksPage(b.id, humanOnly, parsePageQuery(raw));
      return listOf(page.data.map((l) => clickedLinkOf(l, humanOnly)), page.has_more);
    },
  };
}

export type BroadcastsService = ReturnType<typeof broadcastsService>;

const notDraft = (status: BroadcastStatus, verb: string) =>
  validationError(422, undefined, `Only a draft broadcast can be ${verb}; this one is ${status}.`);

const bounceTypes = { permanent: 'Permanent', transient: 'Transient', undetermined: 'Undetermined' } as const;

/** Which recipients a type lists: from the fan-out's rows, the emails' delivery, or the recorded engagement. */
function selectionOf(type: RecipientType, bounceType: string | undefined, humanOnly: boolean): RecipientSelection {
  switch (type) {
    case 'sent': return { kind: 'sent' };
    case 'suppressed': return { kind: 'excluded' };
    case 'delivered': return { kind: 'delivery', states: ['delivered'] };
    case 'bounced': {
      if (bounceType !== undefined && !(bounceType in bounceTypes)) throw invalidParameter('bounce_type', '`bounce_type` must be permanent, transient or undetermined.');
      return { kind: 'delivery', states: ['bounced'], ...(bounceType ? { bounceType: bounceTypes[bounceType as keyof typeof bounceTypes] } : {}) };
    }
    case 'opened': case 'clicked': return { kind: 'engaged', event: type, humanOnly };
    case 'complained': case 'unsubscribed': return { kind: 'marked', mark: type };
  }
}

/** A recipient's opens or clicks, less the machines' with `exclude_machine=true`. */
function hits(r: BroadcastRecipientView, kind: 'opens' | 'clicks', humanOnly: boolean): number {
  const all = Number(r[kind] ?? 0);
  return humanOnly ? all - Number(r[kind === 'opens' ? 'machine_opens' : 'machine_clicks'] ?? 0) : all;
}

function bounceTypeOf(stored: string | null): 'permanent' | 'transient' | 'undetermined' {
  const t = (stored ?? '').toLowerCase();
  return t === 'permanent' || t === 'transient' ? t : 'undetermined';
}
