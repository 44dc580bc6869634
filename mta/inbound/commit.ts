import type { SMTPServerSession } from 'smtp-server';
import { storeReceived, type IngestDeps, type ReceivedRoute, type ScanOutcome } from '../../core/receiving/index.js';
import { envelopeFrom, type ReceivedData } from './data.js';
import type { ReportHandler, ReportRoute } from './server.js';

// The end of DATA, once the spool file is fsynced and scanned: what the message is for reaches
// the database — reports (DSN, ARF) recorded against the recipient they name, received mail
// stored once per team — and the 250 text names the first record.

export interface CommitDeps {
  ingest: IngestDeps;
  reports: ReportHandler;
}

export async function commitMessage(deps: CommitDeps, data: ReceivedData, session: SMTPServerSession): Promise<string> {
  const received = data.routes.filter((r): r is ReceivedRoute => r.kind === 'received');
  const reports = data.routes.filter((r): r is ReportRoute => r.kind === 'dsn' || r.kind === 'arf');
  const ids: string[] = [];
  // Reports first: they never touch the spool, so a failure there leaves no stored record behind
  // the file the caller then removes.
  if (reports.length > 0) ids.push(...(await deps.reports(data, reports)));
  if (received.length > 0) {
    const stored = await storeReceived(deps.ingest, {
      spoolKey: data.spoolKey, plannedId: data.plannedId, raw: data.raw, receivedAt: data.receivedAt, envelopeFrom: envelopeFrom(session),
      clientIp: session.remoteAddress, clientHelo: session.hostNameAppearsAs || '', routes: received,
      scan: scanOutcome(data.decision), auth: data.auth as unknown as Record<string, unknown>,
    });
    ids.unshift(...stored.map((s) => s.id));
  }
  return `2.0.0 Ok: queued as ${ids[0] ?? session.id}`;
}

function scanOutcome(decision: ReceivedData['decision']): ScanOutcome {
  if (decision.action === 'drop_virus') return { status: 'infected', signature: decision.signature };
  return { status: decision.status, signature: null };
}
