import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { addTlsRptCounts, type TlsRptCountRow } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import type { StsApplied } from './sts-route.js';
import type { TlsResult } from './tls-results.js';

// TLS-RPT's raw material (RFC 8460): per UTC day, policy domain, MX host and result, how many
// sessions ended so. Counted in memory (a session must not cost a write) and added to SQLite
// every `flushMs` and at stop; the jobs role builds each finished day's report from the sums.
// A crash loses at most one interval of counts: a report is a statistic, not a record of mail.

export interface TlsReportCounter {
  count(applied: StsApplied, mxHost: string, result: TlsResult): void;
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export function tlsReportCounter(deps: { db: Db; clock: Clock; logger: Logger; flushMs: number }): TlsReportCounter {
  let pending = new Map<string, TlsRptCountRow>();
  let flushing: Promise<void> = Promise.resolve();
  const flush = () => {
    flushing = flushing.then(async () => {
      if (!pending.size) return;
      const rows = [...pending.values()];
      pending = new Map();
      try {
        await addTlsRptCounts(deps.db, rows);
      } catch (err) {
        // Kept for the next flush: the counts add up whenever they land.
        deps.logger.warn({ err, rows: rows.length }, 'TLS-RPT counts could not be written, kept for the next flush');
        for (const row of rows) add(row);
      }
    });
    return flushing;
  };
  const add = (row: TlsRptCountRow) => {
    const key = `${row.day}|${row.policy_domain}|${row.policy_id}|${row.mx_host}|${row.result}`;
    const current = pending.get(key);
    if (current) current.sessions += row.sessions;
    else pending.set(key, { ...row });
  };
  const timer = setInterval(() => void flush(), deps.flushMs);
  timer.unref();
  return {
    count(applied, mxHost, result) {
      add({
        day: deps.clock.now().toISOString().slice(0, 10), policy_domain: applied.domain, policy_id: applied.policy?.id ?? '',
        mx_host: mxHost.toLowerCase(), result, sessions: 1,
      });
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
