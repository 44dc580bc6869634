import type { Db } from '../../storage/sql/index.js';
import {
  contactImportsRepo, contactPropertiesRepo, contactsBatchRepo, contactsRepo,
  type ConsentRecordRow, type ContactTopicRow, type ImportCounts, type PlatformEventRow,
} from '../../storage/repos/index.js';
import { declareProperty, storedValue, type ConsentContext, type ConsentHasher, type TopicChoiceInput } from '../contacts/index.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import { topicsRepo } from '../topics/index.js';
import type { ColumnPlan } from './column-map.js';
import { decide, type Decisions, type Entry } from './decide.js';
import type { SegmentMembership } from './ports.js';
import type { CheckedRow, ImportRow, RowFailure } from './rows.js';

// One batch of rows written in the step's transaction: the contacts, their property values,
// consent records (source `import`), topic choices, segment memberships, platform events, the
// kept failures and the import's counts all commit with the worker's cursor, so a batch counts
// once whatever kills the process. No contact.* webhook is written (spec Events: none per row of
// an import); the platform stream gets svc:contact.created and svc:topic.* as for the API.

/** The first thousand failures of an import are kept (spec Limits). */
export const FAILURES_KEPT = 1000;

export interface BatchContext {
  importId: string;
  teamId: string;
  mode: 'upsert' | 'skip';
  plan: ColumnPlan;
  topics: readonly TopicChoiceInput[];
  segments: readonly string[];
  consent: ConsentContext;
  hash: ConsentHasher;
  /** 0: no limit. */
  limit: number;
  /** Failures counted before this batch (those past the first thousand are not kept). */
  failedBefore: number;
  segmentMembership: SegmentMembership;
  now: Date;
}

export async function writeBatch(trx: Db, ctx: BatchContext, checked: readonly CheckedRow[]): Promise<ImportCounts> {
  const at = ctx.now.toISOString();
  const failures: RowFailure[] = [];
  const unavailable = await ensureProperties(trx, ctx, at);
  const rows: ImportRow[] = [];
  for (const c of checked) {
    if (!c.ok) failures.push(c.failure);
    else if (!failUnavailable(c.row, unavailable, failures)) rows.push(c.row);
  }
  const keys = [...new Set(rows.map((r) => r.emailKey))];
  const batch = contactsBatchRepo(trx);
  const existing = new Map((await batch.byEmailKeys(ctx.teamId, keys)).map((c) => [c.email_key, c]));
  const counted = ctx.limit > 0 ? await contactsRepo(trx).countCounted(ctx.teamId) : 0;
  const d = decide({ teamId: ctx.teamId, mode: ctx.mode, existing, limit: ctx.limit, counted, at }, rows, failures);
  await writeContacts(trx, ctx, d, at);
  const kept = Math.max(0, FAILURES_KEPT - ctx.failedBefore);
  const failed = d.failures.sort((a, b) => a.rowNumber - b.rowNumber);
  await contactImportsRepo(trx).insertFailures(failed.slice(0, kept).map((f) => ({ import_id: ctx.importId, row_number: f.rowNumber, email: f.email, reason: f.reason })));
  return { total: checked.length, created: d.created, updated: d.updated, skipped: d.skipped, failed: failed.length };
}

/**
 * Declares the plan's properties the team lacks (each with the plan's type). Answers the keys
 * whose values cannot be stored, with the reason: declared since with another type, or past the
 * team's hundred properties.
 */
async function ensureProperties(trx: Db, ctx: BatchContext, at: string): Promise<Map<string, string>> {
  const unavailable = new Map<string, string>();
  if (ctx.plan.properties.length === 0) return unavailable;
  const declared = new Map((await contactPropertiesRepo(trx).byKeys(ctx.teamId, ctx.plan.properties.map((p) => p.key))).map((d) => [d.key_fold, d]));
  for (const p of ctx.plan.properties) {
    const found = declared.get(p.key.toLowerCase());
    if (found && found.type !== p.type) unavailable.set(p.key, `Property \`${found.key}\` is now declared as a ${found.type}.`);
    if (found) continue;
    try {
      await declareProperty(trx, ctx.teamId, p.key, p.type, null, at);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      unavailable.set(p.key, err.message);
    }
  }
  return unavailable;
}

function failUnavailable(row: ImportRow, unavailable: ReadonlyMap<string, string>, failures: RowFailure[]): boolean {
  if (unavailable.size === 0) return false;
  const blocked = row.properties.find(([key]) => unavailable.has(key));
  if (!blocked) return false;
  failures.push({ rowNumber: row.rowNumber, email: row.email, reason: unavailable.get(blocked[0])! });
  return true;
}

async function writeContacts(trx: Db, ctx: BatchContext, d: Decisions, at: string): Promise<void> {
  const batch = contactsBatchRepo(trx);
  const entries = [...d.entries.values()];
  const fresh = entries.filter((e) => e.kind === 'new');
  const inserted = fresh.length ? await batch.insertNew(fresh.map((e) => e.row)) : new Set<string>();
  // On PostgreSQL another writer may have added an address since the lookup: that row is left to it.
  const lost = fresh.filter((e) => !inserted.has(e.row.email_key));
  d.created -= lost.length;
  d.skipped += lost.length;
  const written = entries.filter((e) => e.kind !== 'new' || inserted.has(e.row.email_key));
  await batch.rewrite(written.filter((e) => e.kind !== 'new').map((e) => e.row));
  await batch.setValues(written.flatMap((e) => [...e.values].map(([key, value]) => ({ contact_id: e.row.id, key, team_id: ctx.teamId, ...storedValue(value) }))));
  const consent: ConsentRecordRow[] = [];
  const platform: PlatformEventRow[] = [];
  for (const e of written) {
    if (e.kind === 'existing' && e.row.subscription_status === e.before) continue;
    consent.push(consentRow(ctx, e, { kind: 'subscription', topic_id: null, value: e.row.subscription_status }, at));
    if (e.kind !== 'existing') platform.push(platformRow(ctx, e, 'svc:contact.created', { contact_id: e.row.id }, at));
  }
  await writeChoices(trx, ctx, written, consent, platform, at);
  await batch.insertConsent(consent);
  await batch.insertPlatformEvents(platform);
  if (ctx.segments.length && written.length) await ctx.segmentMembership.add(trx, ctx.teamId, ctx.segments, written.map((e) => e.row.id), ctx.now);
}

/**
 * The import's topic choices for each written contact. An existing contact's explicit opt-out is
 * never turned into an opt-in by a file (rule 1's spirit: an upload is not a person opting in);
 * a choice it already has is not written again.
 */
async function writeChoices(trx: Db, ctx: BatchContext, written: Entry[], consent: ConsentRecordRow[], platform: PlatformEventRow[], at: string): Promise<void> {
  if (ctx.topics.length === 0 || written.length === 0) return;
  const live = new Set((await topicsRepo(trx).byIds(ctx.teamId, ctx.topics.map((t) => t.id))).map((t) => t.id));
  const topics = ctx.topics.filter((t) => live.has(t.id));
  const batch = contactsBatchRepo(trx);
  const existingIds = written.filter((e) => e.kind !== 'new').map((e) => e.row.id);
  const current = new Map((existingIds.length ? await batch.choicesOf(existingIds) : []).map((c) => [`${c.contact_id} ${c.topic_id}`, c.subscription]));
  const choices: ContactTopicRow[] = [];
  for (const e of written) {
    for (const t of topics) {
      const now = current.get(`${e.row.id} ${t.id}`);
      if (now === t.subscription || (now === 'opt_out' && e.kind === 'existing')) continue;
      choices.push({ contact_id: e.row.id, topic_id: t.id, team_id: ctx.teamId, subscription: t.subscription, updated_at: at });
      consent.push(consentRow(ctx, e, { kind: 'topic', topic_id: t.id, value: t.subscription }, at));
      const type = t.subscription === 'opt_in' ? 'svc:topic.subscribed' : 'svc:topic.unsubscribed';
      platform.push(platformRow(ctx, e, type, { contact_id: e.row.id, topic_id: t.id }, at));
    }
  }
  await batch.setChoices(choices);
}

function consentRow(ctx: BatchContext, e: Entry, what: Pick<ConsentRecordRow, 'kind' | 'topic_id' | 'value'>, at: string): ConsentRecordRow {
  return {
    id: newId(), team_id: ctx.teamId, contact_id: e.row.id, email_hash: ctx.hash(e.row.email_key), ...what,
    source: ctx.consent.source, ip: ctx.consent.ip, user_agent: ctx.consent.userAgent, created_at: at,
  };
}

const platformRow = (ctx: BatchContext, e: Entry, type: string, data: Record<string, unknown>, at: string): PlatformEventRow => ({
  id: newId(), team_id: ctx.teamId, type, contact_id: e.row.id, data: JSON.stringify(data), created_at: at,
});
