import type { SMTPServerSession } from 'smtp-server';
import { planReceived, storeReceived, type IngestDeps, type ReceivedPlan, type ReceivedRoute, type ScanOutcome } from '../../core/receiving/index.js';
import type { RecipientRoute } from '../../core/receiving/index.js';
import { newId } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import { postmasterRawKey, receivedRawKey, type Spool } from '../../storage/files/index.js';
import { envelopeFrom, type ReceivedData } from './data.js';
import type { ReportHandler, ReportRoute } from './server.js';

// The end of DATA, once the spool file is fsynced and scanned: what the message is for reaches
// the database — reports (DSN, ARF) recorded against the recipient they name, received mail
// stored once per team — and the 250 text names the first record.
//
// The raw file stays the listener's from the spool to the commit (data.ts writes it; this gives
// it its names): each record beyond the first gets a hard link before the transaction (no disk
// wait holds the write lock), a failed commit takes the links back, and the name of a record
// stored without its raw source goes after the commit. Core only writes rows.
//
// Mail for the appliance's own postmaster belongs to no team: its raw file gets a name under the
// spool's postmaster/ folder (the operator's to read) and one log line says so. It is named before
// the records commit and the name is taken back when they fail, so a retried message is kept once.

export interface CommitDeps {
  ingest: IngestDeps;
  reports: ReportHandler;
  spool: Spool;
  logger: Logger;
}

type PostmasterRoute = Extract<RecipientRoute, { kind: 'postmaster' }>;

export async function commitMessage(deps: CommitDeps, data: ReceivedData, session: SMTPServerSession): Promise<string> {
  const received = data.routes.filter((r): r is ReceivedRoute => r.kind === 'received');
  const reports = data.routes.filter((r): r is ReportRoute => r.kind === 'dsn' || r.kind === 'arf');
  const postmaster = data.routes.filter((r): r is PostmasterRoute => r.kind === 'postmaster');
  const ids: string[] = [];
  const kept = postmaster.length > 0 ? await keepForPostmaster(deps.spool, data) : undefined;
  try {
    // Reports first: they never touch the spool, so a failure there leaves no stored record behind
    // the file the caller then removes.
    if (reports.length > 0) ids.push(...(await deps.reports(data, reports)));
    if (received.length > 0) ids.unshift(...(await storeWithNames(deps, data, session, received)));
  } catch (err) {
    if (kept?.key) await deps.spool.remove(kept.key).catch(() => undefined);
    throw err;
  }
  if (kept) logPostmaster(deps.logger, data, session, postmaster, kept);
  deps.logger.info({
    session: session.id, ip: session.remoteAddress, from: envelopeFrom(session), bytes: data.raw.length, ids,
    received: received.length, reports: reports.length, postmaster: postmaster.length, virus: data.decision.action === 'drop_virus',
  }, 'inbound message accepted');
  return `2.0.0 Ok: queued as ${ids[0] ?? kept?.id ?? session.id}`;
}

/** Gives the raw file its postmaster/ name (none for a virus: accepted, not kept). */
async function keepForPostmaster(spool: Spool, data: ReceivedData): Promise<{ id: string; key: string | null }> {
  const id = newId();
  if (data.decision.action === 'drop_virus') return { id, key: null };
  const key = postmasterRawKey(id, data.receivedAt);
  await spool.link(data.spoolKey, key);
  return { id, key };
}

function logPostmaster(logger: Logger, data: ReceivedData, session: SMTPServerSession, routes: PostmasterRoute[], kept: { id: string; key: string | null }): void {
  const fields = {
    session: session.id, id: kept.id, rcpt: routes.map((r) => r.address), from: envelopeFrom(session), ip: session.remoteAddress,
    size: data.raw.length, spoolKey: kept.key,
  };
  if (kept.key) logger.info(fields, 'postmaster mail kept for the operator');
  else logger.warn({ ...fields, signature: data.decision.action === 'drop_virus' ? data.decision.signature : null }, 'postmaster mail dropped: virus');
}

async function storeWithNames(deps: CommitDeps, data: ReceivedData, session: SMTPServerSession, routes: ReceivedRoute[]): Promise<string[]> {
  const plans = planReceived(routes, data.plannedId);
  const linked = await linkNames(deps.spool, data, plans);
  try {
    const stored = await storeReceived(deps.ingest, {
      raw: data.raw, receivedAt: data.receivedAt, envelopeFrom: envelopeFrom(session),
      clientIp: session.remoteAddress, clientHelo: session.hostNameAppearsAs || '', routes,
      scan: scanOutcome(data.decision), auth: data.auth as unknown as Record<string, unknown>,
    }, plans);
    for (const record of stored) if (!record.rawKept) await deps.spool.remove(receivedRawKey(record.id));
    return stored.map((r) => r.id);
  } catch (err) {
    // The planned name is data.ts's to abort; the links are ours to take back.
    for (const key of linked) await deps.spool.remove(key).catch(() => undefined);
    throw err;
  }
}

/** A hard link at each record's name but the one the file was written at. */
async function linkNames(spool: Spool, data: ReceivedData, plans: readonly ReceivedPlan[]): Promise<string[]> {
  const linked: string[] = [];
  try {
    for (const plan of plans) {
      if (plan.id === data.plannedId) continue;
      await spool.link(data.spoolKey, receivedRawKey(plan.id));
      linked.push(receivedRawKey(plan.id));
    }
    return linked;
  } catch (err) {
    for (const key of linked) await spool.remove(key).catch(() => undefined);
    throw err;
  }
}

function scanOutcome(decision: ReceivedData['decision']): ScanOutcome {
  if (decision.action === 'drop_virus') return { status: 'infected', signature: decision.signature };
  return { status: decision.status, signature: null };
}
