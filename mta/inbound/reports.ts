import { recordComplaint, recordDsn, type FeedbackDeps } from '../../core/receiving/index.js';
import type { ComplaintReport, DeliveryReport } from '../../core/receiving/index.js';
import { parseArf } from '../bounces/arf.js';
import { parseDsn } from '../bounces/dsn.js';
import type { ReportHandler } from './server.js';

/**
 * Reads the DSNs (sent to a VERP return path) and complaint reports (sent to the feedback address)
 * that come back for mail svc sent, and records each against its email and recipient.
 */
export function reportHandler(deps: FeedbackDeps): ReportHandler {
  return async (data, routes) => {
    if (data.decision.action === 'drop_virus') {
      deps.logger.warn({ signature: data.decision.signature }, 'report carrying a virus ignored');
      return [];
    }
    let dsn: Promise<DeliveryReport | undefined> | undefined;
    let arf: Promise<ComplaintReport | undefined> | undefined;
    const ids: string[] = [];
    for (const route of routes) {
      if (route.kind === 'dsn') {
        dsn ??= parseDsn(data.raw).catch(() => undefined);
        ids.push(await recordDsn(deps, { emailId: route.emailId, recipientId: route.recipientId }, await dsn));
      } else {
        arf ??= parseArf(data.raw).catch(() => undefined);
        ids.push(await recordComplaint(deps, await arf));
      }
    }
    return ids;
  };
}
