import type { Db } from '../../storage/sql/index.js';
import { eventsRepo, type StoredEvent } from '../../storage/repos/index.js';
import { markKey, metricCounts, metricsRollupRepo, type MetricCount, type MetricsBucket } from '../../storage/repos/index.js';
import { inTransaction } from '../../storage/sql/index.js';

// Folds outbox events into the minute rollups. One batch is one transaction that reads the
// rollup's position, adds the batch's counts and moves the position: a crash or a restart repeats
// nothing and loses nothing, and two processes rolling up at once take turns (the transaction's
// first statement is a write, so it holds SQLite's write lock before it reads).
//
// What each event adds, at the minute of its created_at:
//   email.sent            sent += recipients handed to the MTA; attempted once per email
//   email.delivered       delivered          email.delivery_delayed  delivery_delayed
//   email.bounced         bounced and bounced_<permanent|transient|undetermined> from bounce.type
//   email.complained      complained         email.received          received
//   email.failed          failed; attempted once per email
//   email.suppressed      suppressed; attempted once per email
//   email.opened          opened; unique_opened at the email's first open; a machine's open
//                         (open.machine, core/tracking/machine.ts) also machine_opened, any other
//                         also unique_opened_human at the email's first such open
//   email.clicked         the same with clicked, unique_clicked, machine_clicked, unique_clicked_human
// Outcome events name one recipient each, so `sent` counts recipients too: delivered/sent stays a
// fraction for an email with several recipients. The "once per email" counts are marks
// (metrics_email_marks): an email adds to attempted, unique_opened or unique_clicked only at its
// first such event, so no email counts twice in any bucket, daily buckets add up to the weekly one,
// and totals equal the sum of their rows.

export const ROLLUP_CURSOR = 'metrics-rollup';

type MarkKind = 'attempted' | 'opened' | 'clicked' | 'opened_human' | 'clicked_human';

// Counters are arrays in metricCounts order while a batch is folded: thousands of events per
// batch, and plain arrays cost far less than objects built and spread per event.
const at = Object.fromEntries(metricCounts.map((c, i) => [c, i])) as Record<MetricCount, number>;
const markCounter: Record<MarkKind, number> = {
  attempted: at.attempted, opened: at.unique_opened, clicked: at.unique_clicked,
  opened_human: at.unique_opened_human, clicked_human: at.unique_clicked_human,
};
const NONE = -1;

interface Contribution {
  teamId: string;
  minute: number;
  emailId?: string;
  broadcastId: string;
  /** Counter indexes this event adds 1 to (NONE for no second one). */
  first: number;
  second: number;
  mark?: MarkKind;
  /** Opens and clicks no machine made: the mark of the unique count without machines. */
  humanMark?: MarkKind;
  /** email.sent: `sent` is the email's recipient count, looked up in the batch. */
  sentEmail?: boolean;
}

const bounceCounter = (type: unknown): number =>
  type === 'Permanent' ? at.bounced_permanent : type === 'Transient' ? at.bounced_transient : at.bounced_undetermined;

const simple: Record<string, { first: number; mark?: MarkKind }> = {
  'email.delivered': { first: at.delivered },
  'email.delivery_delayed': { first: at.delivery_delayed },
  'email.complained': { first: at.complained },
  'email.failed': { first: at.failed, mark: 'attempted' },
  'email.suppressed': { first: at.suppressed, mark: 'attempted' },
  'email.opened': { first: at.opened, mark: 'opened' },
  'email.clicked': { first: at.clicked, mark: 'clicked' },
  'email.received': { first: at.received },
};

function contributionOf(event: StoredEvent): Contribution | undefined {
  const kind = simple[event.type];
  if (!kind && event.type !== 'email.sent' && event.type !== 'email.bounced') return undefined;
  const data = JSON.parse(event.data) as Record<string, any>;
  const c: Contribution = {
    teamId: event.team_id,
    minute: Math.floor(Date.parse(event.created_at) / 60_000),
    emailId: typeof data.email_id === 'string' ? data.email_id : undefined,
    broadcastId: typeof data.broadcast_id === 'string' ? data.broadcast_id : '',
    first: kind?.first ?? NONE,
    second: NONE,
    mark: kind?.mark,
  };
  if (event.type === 'email.sent') {
    c.mark = 'attempted';
    c.sentEmail = true;
  } else if (event.type === 'email.bounced') {
    c.first = at.bounced;
    c.second = bounceCounter(data.bounce?.type);
  } else if (event.type === 'email.opened' || event.type === 'email.clicked') {
    const open = event.type === 'email.opened';
    if ((open ? data.open : data.click)?.machine === true) c.second = open ? at.machine_opened : at.machine_clicked;
    else c.humanMark = open ? 'opened_human' : 'clicked_human';
  }
  return c;
}

const bucket = (c: Contribution, domainId: string, emailId?: string): MetricsBucket => ({
  team_id: c.teamId, minute: c.minute, domain_id: domainId, broadcast_id: c.broadcastId,
  ...(emailId ? { email_id: emailId } : {}), counters: new Array<number>(metricCounts.length).fill(0),
});

/** The minute buckets of a batch added up per quarter hour (the quarter's first minute). */
function quartersOf(minutes: Iterable<MetricsBucket>): MetricsBucket[] {
  const quarters = new Map<string, MetricsBucket>();
  for (const m of minutes) {
    const minute = m.minute - (((m.minute % 15) + 15) % 15);
    const key = `${m.team_id} ${minute} ${m.domain_id} ${m.broadcast_id}`;
    const q = quarters.get(key);
    if (!q) quarters.set(key, { ...m, minute, counters: [...m.counters] });
    else for (let i = 0; i < q.counters.length; i++) q.counters[i]! += m.counters[i]!;
  }
  return [...quarters.values()];
}

const uniqueEmailIds = (list: Contribution[], keep: (c: Contribution) => unknown) =>
  [...new Set(list.filter((c) => c.emailId && keep(c)).map((c) => c.emailId!))];

/** Adds one batch of events to the rollups, inside the caller's transaction. */
async function foldBatch(trx: Db, events: readonly StoredEvent[]): Promise<void> {
  const repo = metricsRollupRepo(trx);
  const contributions = events.map(contributionOf).filter((c): c is Contribution => c !== undefined);
  if (contributions.length === 0) return;
  const domains = await repo.domainsOfEmails(uniqueEmailIds(contributions, () => true));
  const recipients = await repo.sentRecipients(uniqueEmailIds(contributions, (c) => c.sentEmail));
  const marked = await repo.marksOf(uniqueEmailIds(contributions, (c) => c.mark || c.humanMark));
  const newMarks: { email_id: string; kind: string; minute: number }[] = [];
  const minutes = new Map<string, MetricsBucket>();
  const perEmail = new Map<string, MetricsBucket>();
  for (const c of contributions) {
    const domainId = (c.emailId && domains.get(c.emailId)) || '';
    const key = `${c.teamId} ${c.minute} ${domainId} ${c.broadcastId}`;
    let row = minutes.get(key);
    if (!row) minutes.set(key, (row = bucket(c, domainId)));
    let emailRow: MetricsBucket | undefined;
    if (c.emailId) {
      const emailKey = `${c.emailId} ${c.minute}`;
      emailRow = perEmail.get(emailKey);
      if (!emailRow) perEmail.set(emailKey, (emailRow = bucket(c, domainId, c.emailId)));
    }
    const add = (index: number, value: number) => {
      row.counters[index]! += value;
      if (emailRow) emailRow.counters[index]! += value;
    };
    if (c.first !== NONE) add(c.first, 1);
    if (c.second !== NONE) add(c.second, 1);
    // An email whose rows are gone (or were never written) still counts as one recipient sent.
    if (c.sentEmail) add(at.sent, c.emailId ? recipients.get(c.emailId) ?? (domains.has(c.emailId) ? 0 : 1) : 1);
    for (const mark of [c.mark, c.humanMark]) {
      if (!mark || !c.emailId || marked.has(markKey(c.emailId, mark))) continue;
      marked.add(markKey(c.emailId, mark));
      newMarks.push({ email_id: c.emailId, kind: mark, minute: c.minute });
      add(markCounter[mark], 1);
    }
  }
  await repo.insertMarks(newMarks);
  await repo.addMinutes([...minutes.values()]);
  await repo.addQuarters(quartersOf(minutes.values()));
  await repo.addEmailMinutes([...perEmail.values()]);
  await repo.rememberDomains([...new Set([...minutes.values()].map((r) => r.domain_id).filter(Boolean))]);
}

export interface MetricsRollupDeps {
  db: Db;
  /** Events read (and folded) per transaction. */
  batchSize: number;
  /**
   * Pause between two full batches, as a share of the time the batch held the write lock (1: as
   * long again). Other processes waiting for the lock poll it on SQLite's busy handler (every
   * 100 ms once they have waited a while): without a pause they would rarely find it free while a
   * large backlog is folded, and could give up with SQLITE_BUSY.
   */
  pauseRatio?: number;
}

export interface MetricsRollup {
  /** One batch; returns the number of outbox events it moved past. */
  step(): Promise<number>;
  /** One batch inside the caller's transaction (the durable worker's step); events moved past. */
  foldInto(trx: Db): Promise<number>;
  /** Whether the outbox holds events beyond the rollup's position (a read, no lock). */
  pending(): Promise<boolean>;
  /** Batches until the outbox is read to its end, or `maxEvents` have been read. */
  catchUp(maxEvents?: number): Promise<{ events: number; caughtUp: boolean }>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function metricsRollup(deps: MetricsRollupDeps): MetricsRollup {
  const pauseRatio = deps.pauseRatio ?? 1;
  // One batch at a time per process: the loop and the requests that catch up share this chain.
  let chain: Promise<unknown> = Promise.resolve();
  const foldInto = async (trx: Db): Promise<number> => {
    const repo = metricsRollupRepo(trx);
    await repo.lockCursor(ROLLUP_CURSOR);
    const from = await repo.cursor(ROLLUP_CURSOR);
    const events = await eventsRepo(trx).after(from, deps.batchSize);
    if (events.length === 0) return 0;
    await foldBatch(trx, events);
    await repo.setCursor(ROLLUP_CURSOR, events[events.length - 1]!.seq);
    return events.length;
  };
  const runStep = () => inTransaction(deps.db, foldInto);
  const step = (): Promise<number> => {
    const next = chain.then(runStep, runStep);
    chain = next.catch(() => undefined);
    return next;
  };
  return {
    step,
    foldInto,
    async pending() {
      const from = await metricsRollupRepo(deps.db).cursor(ROLLUP_CURSOR);
      return (await eventsRepo(deps.db).after(from, 1)).length > 0;
    },
    async catchUp(maxEvents = Number.POSITIVE_INFINITY) {
      let events = 0;
      for (;;) {
        const started = performance.now();
        const n = await step();
        events += n;
        if (n < deps.batchSize) return { events, caughtUp: true };
        if (events >= maxEvents) return { events, caughtUp: false };
        if (pauseRatio > 0) await sleep(Math.min(100, Math.max(1, (performance.now() - started) * pauseRatio)));
      }
    },
  };
}
