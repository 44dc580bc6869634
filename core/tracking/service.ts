import { emailsRepo, recipientById, type EmailRecipientRow, type EmailRow } from '../../storage/repos/index.js';
import { groupCommit, type Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { envelopeData } from '../emails/index.js';
import type { Logger } from '../logger.js';
import { emitEmailEvent } from '../outbox/index.js';
import { recordEngagement, type EngagementHit } from './engagement.js';
import { LINK_BURST_MS, machineReason, type MachineReason } from './machine.js';
import { trackingTokens, type TrackingClaim } from './tokens.js';

// Open and click hits: the answer goes out at once (the caller redirects or sends the pixel as
// soon as `open`/`click` return), and the hit is recorded after it, off the request: hits of a
// window (`flushMs`) share one durable transaction (storage/sql/group-commit.ts — one fsync, run
// off the event loop). Each hit writes its `email.opened` / `email.clicked` event to the outbox
// (webhooks and the metrics rollup follow from there; the rollup counts unique opens and clicks at
// each email's first) and the email's last_event, and adds to the recipient's engagement and, for a
// broadcast's email, to the clicked link's counts (engagement.ts) in the same transaction.
//
// What a crash can lose: hits of the last window not yet committed (`flushMs`, 200 ms by
// default), like the request log. Redis was not used as the buffer: it holds only what SQLite can
// rebuild (docs/architecture.md rule 7), and a hit cannot be rebuilt.
//
// Bounds: the same token from the same address and user agent within DEDUPE_MS is one hit (a
// double-fired image, a reader clicking twice); at most `maxPending` hits wait for their commit —
// beyond that hits are answered but not recorded (and counted in the log), so a flood costs memory
// no further. A HEAD request is answered and never recorded: people's clients GET.

export interface TrackingDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** 32 bytes: secretBox.derive('tracking v1'), the key the outbound side mints with. */
  key: Uint8Array;
  /** Commit window of recorded hits (ms). */
  flushMs: number;
  maxPending?: number;
}

export interface HitClient {
  ip: string | null;
  userAgent: string;
  /** A HEAD request: answered, not recorded. */
  head?: boolean;
}

interface Hit {
  claim: TrackingClaim;
  client: HitClient;
  at: Date;
  reason: MachineReason | undefined;
  written: boolean;
}

export const DEDUPE_MS = 10_000;
const BATCH_HITS = 100;
const MEMORY_LIMIT = 50_000;

export function trackingService(deps: TrackingDeps) {
  const tokens = trackingTokens(deps.key);
  // Genuine tokens already checked: a MAC costs more than the rest of a hit, and the same message's
  // tokens come back (reloads, preview panes, several readers of a forwarded mail). Only genuine
  // ones are kept, so junk cannot fill it; it is dropped whole when full.
  const checked = new Map<string, TrackingClaim>();
  const claimOf = (token: string, kind: 'open' | 'click') => {
    const known = checked.get(token);
    if (known) return known.kind === kind ? known : undefined;
    const claim = tokens.open(token, kind);
    if (claim) {
      if (checked.size >= 10_000) checked.clear();
      checked.set(token, claim);
    }
    return claim;
  };
  const commits = groupCommit(deps.db, { windowMs: deps.flushMs, maxBatch: 2 });
  const maxPending = deps.maxPending ?? 20_000;
  const log = deps.logger.child({ area: 'tracking' });
  const inflight = new Set<Promise<unknown>>();
  /** The batch hits join until its transaction starts; hits waiting for their commit. */
  let filling: Hit[] | undefined;
  let pending = 0;
  const seen = new Map<string, number>();
  const lastClick = new Map<string, { at: number; linkIdx: number; hit: Hit }>();
  const counts = { recorded: 0, repeats: 0, dropped: 0 };

  /** A repeat of the same token by the same client within DEDUPE_MS. */
  function repeated(token: string, client: HitClient, now: number): boolean {
    const key = `${token} ${client.ip ?? ''} ${client.userAgent}`;
    const before = seen.get(key);
    if (before !== undefined && now - before < DEDUPE_MS) return true;
    if (seen.size >= MEMORY_LIMIT) prune(seen, (at) => now - at >= DEDUPE_MS);
    seen.set(key, now);
    return false;
  }

  function record(token: string, claim: TrackingClaim, client: HitClient): void {
    if (client.head) return;
    const at = deps.clock.now();
    const now = at.getTime();
    if (repeated(token, client, now)) { counts.repeats++; return; }
    if (pending >= maxPending) {
      if (counts.dropped++ % 1000 === 0) log.warn({ dropped: counts.dropped, pending }, 'tracking hits not recorded: too many waiting for their commit');
      return;
    }
    const hit: Hit = { claim, client, at, reason: undefined, written: false };
    hit.reason = machineReason({
      kind: claim.kind, userAgent: client.userAgent, sinceSentS: now / 1000 - claim.mintedAt, sinceOtherClickMs: burstGap(hit, now),
    });
    enqueue(hit);
  }

  /**
   * Hits join a batch until its transaction starts (the group commit's window); a batch is written
   * in slices of BATCH_HITS (two to a transaction at most) so no transaction holds the event loop long.
   */
  function enqueue(hit: Hit): void {
    pending++;
    if (!filling || filling.length >= BATCH_HITS) {
      const batch: Hit[] = [];
      filling = batch;
      const done = commits.run((trx) => {
        if (filling === batch) filling = undefined;
        return writeBatch(trx, batch);
      }).catch((err: unknown) => {
        log.error({ err, hits: batch.length }, 'tracking hits not recorded');
      }).finally(() => { pending -= batch.length; });
      inflight.add(done);
      void done.finally(() => inflight.delete(done));
    }
    filling.push(hit);
  }

  /**
   * Milliseconds since this recipient's click on another link of the message. The earlier click is
   * flagged too when it is still waiting for its commit (a scanner following every link).
   */
  function burstGap(hit: Hit, now: number): number | undefined {
    if (hit.claim.kind !== 'click') return undefined;
    const key = `${hit.claim.emailId}.${hit.claim.recipientIdx}`;
    const previous = lastClick.get(key);
    if (lastClick.size >= MEMORY_LIMIT) prune(lastClick, (c) => now - c.at >= DEDUPE_MS);
    lastClick.set(key, { at: now, linkIdx: hit.claim.linkIdx!, hit });
    if (!previous || previous.linkIdx === hit.claim.linkIdx) return undefined;
    const gap = now - previous.at;
    if (gap < LINK_BURST_MS && !previous.hit.written && previous.hit.reason === undefined) previous.hit.reason = 'link_burst';
    return gap;
  }

  /** One batch of hits: their events, each email's last_event once, the engagement counts. */
  async function writeBatch(trx: Db, hits: readonly Hit[]): Promise<void> {
    const emails = new Map<string, Promise<EmailRow | undefined>>();
    const recipients = new Map<string, Promise<EmailRecipientRow | undefined>>();
    const lastEvents = new Map<string, { name: string; at: string }>();
    const engaged: EngagementHit[] = [];
    let written = 0;
    for (const hit of hits) hit.written = true;
    for (const hit of hits) {
      const { claim, client, at } = hit;
      const email = await once(emails, claim.emailId, () => emailsRepo(trx).byIdAnyTeam(claim.emailId));
      const recipientId = `${claim.emailId}.${claim.recipientIdx}`;
      const recipient = email && await once(recipients, recipientId, () => recipientById(trx, recipientId));
      if (!email || !recipient) continue;
      const machine = hit.reason ? { machine: true, machineReason: hit.reason } : { machine: false };
      const detail = claim.kind === 'open'
        ? { open: { ipAddress: client.ip, timestamp: at.toISOString(), userAgent: client.userAgent, ...machine } }
        : { click: { ipAddress: client.ip, link: claim.url, timestamp: at.toISOString(), userAgent: client.userAgent, ...machine } };
      const type = claim.kind === 'open' ? 'email.opened' : 'email.clicked';
      await emitEmailEvent(trx, email, type, envelopeData(email, [recipient.address], detail), at);
      lastEvents.set(email.id, { name: claim.kind === 'open' ? 'opened' : 'clicked', at: at.toISOString() });
      engaged.push({ kind: claim.kind, email, recipientId, url: claim.url, at, machine: hit.reason !== undefined });
      written++;
    }
    for (const [emailId, last] of lastEvents) await emailsRepo(trx).setLastEvent(emailId, last.name, last.at);
    await recordEngagement(trx, engaged);
    counts.recorded += written;
    if (written) log.debug({ hits: hits.length, written, emails: lastEvents.size }, 'tracking hits recorded');
  }

  return {
    /** A genuine open token: records the hit (after answering) and says so; false: answer 404. */
    open(token: string, client: HitClient): boolean {
      const claim = claimOf(token, 'open');
      if (!claim) return false;
      record(token, claim, client);
      return true;
    },
    /** The link of a genuine click token (the hit recorded after answering); undefined: answer 404. */
    click(token: string, client: HitClient): string | undefined {
      const claim = claimOf(token, 'click');
      if (!claim) return undefined;
      record(token, claim, client);
      return claim.url;
    },
    /** Hits written, taken as repeats, and not recorded for want of room, since start. */
    stats: () => ({ ...counts, pending }),
    /** Resolves when every hit taken so far is committed (a stop, tests). */
    async flush(): Promise<void> {
      while (inflight.size) await Promise.allSettled([...inflight]);
    },
  };
}

export type TrackingService = ReturnType<typeof trackingService>;

function prune<V>(map: Map<string, V>, stale: (value: V) => boolean): void {
  for (const [key, value] of map) if (stale(value)) map.delete(key);
  if (map.size >= MEMORY_LIMIT) map.clear();
}

/** One read per key within a batch. */
function once<V>(cache: Map<string, Promise<V>>, key: string, read: () => Promise<V>): Promise<V> {
  let value = cache.get(key);
  if (!value) cache.set(key, (value = read()));
  return value;
}
