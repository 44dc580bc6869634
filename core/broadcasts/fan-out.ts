import { broadcastsRepo, type BroadcastRecipientRow, type BroadcastRow, type ContactRow, type ExclusionReason, type MemberFacts } from '../../storage/repos/index.js';
import { topicsRepo } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import type { CampaignMessage, CampaignSender } from '../emails/index.js';
import type { Logger } from '../logger.js';
import type { RecipientLinks } from '../preferences/index.js';
import { segmentMembersPage } from '../segments/index.js';
import type { PostalAddress } from '../team/index.js';
import { effectiveSubscription } from '../topics/index.js';
import type { StepResult, WorkHandler, WorkItem } from '../work/index.js';
import { teamsRepo } from '../../storage/repos/index.js';
import { contentOf } from './gate.js';
import type { TemplateSource } from './ports.js';
import { mergeValuesOf, messageFor, sendableOf, type Sendable } from './render.js';

// The fan-out (durable work `broadcast-fan-out`, one item per broadcast): each step reads one page
// of the segment's members after the cursor, sorts out who is excluded and why, and prepares one
// ordinary email per remaining member; the page's emails, its recipient rows, the allowance spent
// and the cursor commit in ONE transaction (the worker's). A kill -9 at any moment loses at most
// the page in flight, which the next owner prepares again from the same cursor: nobody is skipped
// and nobody gets two (broadcast_recipients' primary key would refuse the second row anyway).
// A cancel is seen at the next step: the page already committed goes out, the rest never does.

export const FAN_OUT_KIND = 'broadcast-fan-out';

export interface FanOutPayload {
  teamId: string;
  broadcastId: string;
}

export interface FanOutCursor {
  /** The last member id done: pages walk the segment newest first, by id. */
  after: string | null;
  /** The last page is committed: the next step marks the broadcast sent. */
  finished: boolean;
  /** A region whose queue the previous page's emails wait in, woken once that page committed. */
  wake: string | null;
}

export interface FanOutDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  campaign: CampaignSender;
  /** The contact's unsubscribe and preference links, naming the broadcast they came in. */
  linksFor(contact: Pick<ContactRow, 'id' | 'team_id' | 'email_key'>, broadcastId: string): RecipientLinks;
  templates: TemplateSource;
  /** Members per step. */
  pageSize: number;
  wake(region: string): void;
}

interface Sorted {
  messages: CampaignMessage[];
  /** The contact of each message, by the message's index. */
  contacts: ContactRow[];
  excluded: { contact: ContactRow; reason: ExclusionReason }[];
}

export function broadcastFanOut(deps: FanOutDeps): WorkHandler<FanOutPayload, FanOutCursor> {
  const log = deps.logger.child({ area: 'broadcasts' });
  return {
    kind: FAN_OUT_KIND,
    async step(item): Promise<StepResult<FanOutCursor>> {
      const cursor = item.cursor ?? { after: null, finished: false, wake: null };
      if (cursor.wake) deps.wake(cursor.wake);
      const b = await broadcastsRepo(deps.db).byId(item.payload.teamId, item.payload.broadcastId);
      if (!b || b.status === 'canceled' || b.status === 'sent' || b.status === 'draft') {
        log.info({ broadcastId: item.payload.broadcastId, status: b?.status }, 'broadcast fan-out stopped');
        return { kind: 'done' };
      }
      if (cursor.finished) return finish(b, cursor);
      return page(b, cursor, item);
    },
  };

  function finish(b: BroadcastRow, cursor: FanOutCursor): StepResult<FanOutCursor> {
    const at = deps.clock.now().toISOString();
    return {
      kind: 'done', cursor,
      write: async (trx) => {
        if (await broadcastsRepo(trx).transition(b.team_id, b.id, ['queued', 'scheduled', 'sending'], { status: 'sent', sent_at: at, updated_at: at })) {
          log.info({ broadcastId: b.id, teamId: b.team_id }, 'broadcast sent');
        }
      },
    };
  }

  async function page(b: BroadcastRow, cursor: FanOutCursor, item: WorkItem<FanOutPayload, FanOutCursor>): Promise<StepResult<FanOutCursor>> {
    const now = deps.clock.now();
    const members = await membersAfter(b, cursor.after);
    if (members === undefined) {
      log.warn({ broadcastId: b.id }, 'broadcast segment deleted during the fan-out; finishing with who was reached');
      return { kind: 'continue', cursor: { ...cursor, finished: true, wake: null } };
    }
    const sendable = await sendableFor(b);
    const facts = await broadcastsRepo(deps.db).memberFacts(b.team_id, members.data, b.topic_id);
    const topic = b.topic_id ? await topicsRepo(deps.db).byId(b.team_id, b.topic_id) : undefined;
    const fallbacks = upperKeys(await broadcastsRepo(deps.db).fallbacks(b.team_id));
    const sorted = sortMembers(members.data, facts, b.topic_id === null ? undefined : topic ?? null);
    for (const contact of sorted.contacts) {
      const links = deps.linksFor(contact, b.id);
      const values = mergeValuesOf(contact, facts.values.get(contact.id), links);
      sorted.messages.push({ input: messageFor(sendable, contact, values, fallbacks, links), broadcastId: b.id });
    }
    const prepared = await deps.campaign.prepare(b.team_id, sorted.messages, now);
    const rows = recipientRows(b, sorted, prepared.emailIds, prepared.sandboxed, now.toISOString());
    const last = members.data.at(-1)?.id ?? cursor.after;
    const region = prepared.prepared.find((p) => p.dueNow)?.email.region ?? null;
    const next: FanOutCursor = { after: last, finished: !members.has_more, wake: region };
    const sent = rows.filter((r) => r.status === 'sent').length;
    return {
      kind: 'continue', cursor: next,
      write: async (trx) => {
        const at = now.toISOString();
        const repo = broadcastsRepo(trx);
        await repo.transition(b.team_id, b.id, ['queued', 'scheduled'], { status: 'sending', updated_at: at });
        await deps.campaign.commit(trx, b.team_id, prepared, now);
        await repo.insertRecipients(rows);
        await repo.addCounts(b.id, sent, rows.length - sent, { updated_at: at });
        if (item.steps === 0) log.info({ broadcastId: b.id, teamId: b.team_id }, 'broadcast sending');
      },
    };
  }

  async function membersAfter(b: BroadcastRow, after: string | null) {
    try {
      return await segmentMembersPage(deps.db, b.team_id, b.segment_id ?? '', { limit: deps.pageSize, ...(after ? { after } : {}) });
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw err;
    }
  }

  async function sendableFor(b: BroadcastRow): Promise<Sendable> {
    const team = await teamsRepo(deps.db).byId(b.team_id);
    const content = await contentOf(deps.templates, b);
    return sendableOf(content, {
      replyTo: b.reply_to_json === null ? null : (JSON.parse(b.reply_to_json) as string[]),
      previewText: b.preview_text, topicId: b.topic_id,
      postalAddress: JSON.parse(team?.postal_address ?? '{}') as PostalAddress,
    });
  }
}

const upperKeys = <V>(map: ReadonlyMap<string, V>) => new Map([...map].map(([k, v]) => [k.toUpperCase(), v]));

/**
 * Who gets no email, and why: the globally unsubscribed, those who never subscribed, those whose
 * effective subscription to the broadcast's topic is opt_out (a deleted topic reaches no one), and
 * addresses on the team's suppression list. Deleted contacts are never members.
 */
function sortMembers(members: ContactRow[], facts: MemberFacts, topic: { default_subscription: 'opt_in' | 'opt_out' } | null | undefined): Sorted {
  const sorted: Sorted = { messages: [], contacts: [], excluded: [] };
  for (const contact of members) {
    const reason = exclusionOf(contact, facts, topic);
    if (reason) sorted.excluded.push({ contact, reason });
    else sorted.contacts.push(contact);
  }
  return sorted;
}

function exclusionOf(contact: ContactRow, facts: MemberFacts, topic: { default_subscription: 'opt_in' | 'opt_out' } | null | undefined): ExclusionReason | undefined {
  if (contact.subscription_status === 'unsubscribed') return 'unsubscribed';
  if (contact.subscription_status === 'never_subscribed') return 'not_subscribed';
  if (topic === null) return 'topic_opt_out';
  if (topic && effectiveSubscription({ unsubscribed: false }, topic, facts.choices.get(contact.id)) === 'opt_out') return 'topic_opt_out';
  if (facts.suppressed.has(contact.email_key)) return 'suppressed';
  return undefined;
}

function recipientRows(b: BroadcastRow, sorted: Sorted, emailIds: Map<number, string>, sandboxed: Set<number>, at: string): BroadcastRecipientRow[] {
  const row = (contact: ContactRow, status: 'sent' | 'excluded', reason: ExclusionReason | null, emailId: string | null): BroadcastRecipientRow =>
    ({ broadcast_id: b.id, contact_id: contact.id, team_id: b.team_id, email: contact.email_key, status, reason, email_id: emailId, created_at: at });
  return [
    ...sorted.excluded.map((e) => row(e.contact, 'excluded', e.reason, null)),
    ...sorted.contacts.map((c, i) => (sandboxed.has(i) ? row(c, 'excluded', 'sandbox', null) : row(c, 'sent', null, emailIds.get(i)!))),
  ];
}
