// What a process counts as things happen, for the operator's `GET /metrics`. Core and the
// listeners report through this port where the event happens; bin/ holds the registry that turns
// the reports into the exposition, so nothing here knows the metrics library. Figures that are
// facts of the database (queue depth, webhook backlog) are not reported: they are read at scrape
// time (storage/repos/ops-gauges.ts).

/** One outbound delivery attempt, reported once its outcome is known. */
export interface DeliveryAttemptReport {
  /** delivered | deferred | bounced | ambiguous | suppressed | failed. */
  outcome: string;
  /** The recipient's domain (the registry bounds how many get a label of their own). */
  domain: string;
  /** From the start of the attempt (route, connect, transaction) to its outcome. */
  attemptSeconds: number;
  /** From the email's acceptance to this outcome; null when svc does not know it (simulator). */
  sinceAcceptedSeconds: number | null;
}

/** One webhook request and what followed it. */
export interface WebhookAttemptReport {
  /** succeeded | retry (failed, tried again later) | failed (given up, or the endpoint is gone). */
  outcome: 'succeeded' | 'retry' | 'failed';
  seconds: number;
}

/** One scan of an inbound message. */
export interface ScanReport {
  /** clean | virus | error (clamd down, refusing, past svc's deadline, or the message cut short). */
  verdict: string;
  seconds: number;
}

export interface OpsMetrics {
  deliveryAttempt(report: DeliveryAttemptReport): void;
  webhookAttempt(report: WebhookAttemptReport): void;
  scanned(report: ScanReport): void;
}

/** Counts nothing: for tools and tests that build a part without a registry. */
export const noOpsMetrics: OpsMetrics = {
  deliveryAttempt: () => undefined,
  webhookAttempt: () => undefined,
  scanned: () => undefined,
};
