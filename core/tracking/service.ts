import { emailsRepo, eventsRepo, recipientById } from '../../storage/repos/index.js';
import { groupCommit, type Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { envelopeData } from '../emails/index.js';
import type { Logger } from '../logger.js';
import { emitEvent } from '../outbox/index.js';
import { LINK_BURST_MS, machineReason, type MachineReason } from './machine.js';
import { trackingTokens, type TrackingClaim } from './tokens.js';

// Open and click hits: the answer goes out at once (the caller redirects or sends the pixel as
// soon as `open`/`click` return), and the hit is recorded after it, off the request: hits of a
// window (`flushMs`) share one durable transaction (storage/sql/group-commit.ts — one fsync, run
// off the event loop). Each hit writes its `email.opened` / `email.clicked` event to the outbox
// (webhooks and the metrics rollup follow from there; the rollup counts unique opens and clicks at
// each email's first) and the email's last_event.
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
const MEMORY_LIMIT = 50_000;

export function trackingService(deps: TrackingDeps) {
  const tokens = trackingTokens(deps.key);
  const commits = groupCommit(deps.db, { windowMs: deps.flushMs, maxBatch: 1000 });
  const maxPending = deps.maxPending ?? 20_000;
  const log = deps.logger.child({ area: 'tracking' });
  const inflight = new Set<Promise<unknown>>();
  const seen = new Map<string, number>();
  const lastClick = new Map<string, { at: number; linkIdx: number; hit: Hit }>();
  let dropped = 0;

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
    if (repeated(token, client, now)) return;
    if (inflight.size >= maxPending) {
      if (dropped++ % 1000 === 0) log.warn({ dropped, pending: inflight.size }, 'tracking hits not recorded: too many waiting for their commit');
      return;
    }
    const hit: Hit = { claim, client, at, reason: undefined, written: false };
    hit.reason = machineReason({
      kind: claim.kind, userAgent: client.userAgent, sinceSentS: now / 1000 - claim.mintedAt, sinceOtherClickMs: burstGap(hit, now),
    });
    const done = commits.run((trx) => write(trx, hit)).catch((err: unknown) => {
      log.error({ err, emailId: claim.emailId, kind: claim.kind }, 'tracking hit not recorded');
    });
    inflight.add(done);
    void done.finally(() => inflight.delete(done));
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

  async function write(trx: Db, hit: Hit): Promise<void> {
    hit.written = true;
    const { claim, client, at } = hit;
    const email = await emailsRepo(trx).byIdAnyTeam(claim.emailId);
    const recipient = email && await recipientById(trx, `${email.id}.${claim.recipientIdx}`);
    if (!email || !recipient) return;
    const machine = hit.reason ? { machine: true, machineReason: hit.reason } : { machine: false };
    const detail = claim.kind === 'open'
      ? { open: { ipAddress: client.ip, timestamp: at.toISOString(), userAgent: client.userAgent, ...machine } }
      : { click: { ipAddress: client.ip, link: claim.url, timestamp: at.toISOString(), userAgent: client.userAgent, ...machine } };
    const type = claim.kind === 'open' ? 'email.opened' : 'email.clicked';
    await emitEvent(eventsRepo(trx), email.team_id, type, envelopeData(email, [recipient.address], detail), at);
    await emailsRepo(trx).setLastEvent(email.id, claim.kind === 'open' ? 'opened' : 'clicked', at.toISOString());
    log.debug({ emailId: email.id, recipientId: recipient.id, kind: claim.kind, machine: hit.reason ?? false }, 'tracking hit recorded');
  }

  return {
    /** A genuine open token: records the hit (after answering) and says so; false: answer 404. */
    open(token: string, client: HitClient): boolean {
      const claim = tokens.open(token, 'open');
      if (!claim) return false;
      record(token, claim, client);
      return true;
    },
    /** The link of a genuine click token (the hit recorded after answering); undefined: answer 404. */
    click(token: string, client: HitClient): string | undefined {
      const claim = tokens.open(token, 'click');
      if (!claim) return undefined;
      record(token, claim, client);
      return claim.url;
    },
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
