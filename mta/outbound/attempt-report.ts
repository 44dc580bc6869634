import type { DeliveryOutcome } from '../../core/emails/index.js';
import type { Logger } from '../../core/logger.js';
import type { OpsMetrics } from '../../core/ops-metrics.js';
import type { Relay } from './deliver.js';

// One line per delivery attempt with what a mail admin reads in an MTA's log: the recipient (bound
// on the logger with the email and recipient ids), the relay host and address, the TLS protocol and
// cipher, the remote reply with its enhanced status code, the delay since the email was accepted,
// how long this attempt took, and which attempt it was. The same report feeds /metrics.

export interface AttemptFacts {
  outcome: DeliveryOutcome;
  /** The host that decided (or the last one tried); null when none was (no route, simulator). */
  relay: Relay | null;
  /** The email's acceptance time (ISO), when known. */
  acceptedAt: string | null;
  /** This attempt's number for the recipient (1 for the first). */
  attempt: number;
  domain: string;
  attemptMs: number;
  now: Date;
}

const seconds = (ms: number) => Math.round(ms / 10) / 100;

/** The remote reply (or svc's reason) an outcome carries. */
function replyOf(outcome: DeliveryOutcome): string {
  switch (outcome.kind) {
    case 'delivered': case 'deferred': case 'bounced': return outcome.response;
    case 'ambiguous': case 'failed': return outcome.reason;
    case 'suppressed': return `suppressed by the team's list (${outcome.origin})`;
  }
}

/** `host[address]:port` of a relay, or `none`. */
export const relayText = (relay: Relay | null): string => (relay ? `${relay.hostname}[${relay.address}]:${relay.port}` : 'none');

/** The log line's fields (also what the live trace prints, bin/attempt-trace.ts). */
export type AttemptLine = ReturnType<typeof reportAttempt>;

export function reportAttempt(log: Logger, metrics: OpsMetrics, facts: AttemptFacts) {
  const { outcome, relay } = facts;
  const reply = replyOf(outcome);
  const sinceAcceptedMs = facts.acceptedAt ? facts.now.getTime() - Date.parse(facts.acceptedAt) : null;
  const line = {
    status: outcome.kind,
    relay: relayText(relay),
    tls: relay?.tls ? relay.tls.version : 'none',
    tlsCipher: relay?.tls?.cipher ?? null,
    tlsVerified: relay?.tls?.verified ?? null,
    reply: reply.slice(0, 500),
    dsn: /^[245]\d\d[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(reply)?.[1] ?? null,
    delay: sinceAcceptedMs === null ? null : seconds(sinceAcceptedMs),
    attemptSeconds: seconds(facts.attemptMs),
    attempt: facts.attempt,
  };
  if (outcome.kind === 'ambiguous') log.warn(line, 'delivery attempt');
  else log.info(line, 'delivery attempt');
  metrics.deliveryAttempt({
    outcome: outcome.kind, domain: facts.domain, attemptSeconds: facts.attemptMs / 1000,
    sinceAcceptedSeconds: sinceAcceptedMs === null ? null : sinceAcceptedMs / 1000,
  });
  return line;
}
