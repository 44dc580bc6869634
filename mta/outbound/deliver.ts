import type { DeliveryOutcome } from '../../core/emails/index.js';
import { classifyReply } from '../bounces/rules.js';
import type { Route } from './routes.js';
import type { SessionPool } from './session-pool.js';
import type { Envelope, SmtpAttempt, SmtpTarget, TlsInfo } from './smtp-client.js';
import { failedTlsResult, sessionTlsResult, type TlsResult } from './tls-results.js';

// One recipient, one attempt: the route's hosts in order until one answers. A host that cannot
// be reached (or drops before the data) is skipped; a reply decides; data without a reply is
// ambiguous and ends the attempt — it is never sent to another host.

export interface AttemptInput {
  route: Route;
  envelope: Envelope;
  message: Buffer;
  /** Records `submitting`; the data waits for it. */
  beforeData(): Promise<boolean>;
  /** Each new session's TLS result, or a session TLS kept from opening (for TLS-RPT). */
  observeTls?(hostname: string, result: TlsResult): void;
}

/** The host that decided an attempt (or the last one tried), as a mail admin reads it in the log. */
export interface Relay {
  hostname: string;
  address: string;
  port: number;
  /** null: plaintext, or no session was opened. */
  tls: TlsInfo | null;
}

export interface AttemptResult {
  outcome: DeliveryOutcome;
  /** null when no host was tried (no route, DNS failure). */
  relay: Relay | null;
}

export async function attemptDelivery(pool: SessionPool, input: AttemptInput): Promise<AttemptResult> {
  const { route } = input;
  if (route.kind === 'no_route') return { outcome: fromReply(route.reason), relay: null };
  if (route.kind === 'temporary') return { outcome: { kind: 'deferred', response: route.error, delayType: 'TransientCommunicationFailure' }, relay: null };
  const failures: string[] = [];
  let relay: Relay | null = null;
  for (const target of route.targets) {
    const tried = await tryTarget(pool, target, input);
    relay = { hostname: target.hostname, address: target.address, port: target.port, tls: tried.tls };
    const result = tried.attempt;
    switch (result.kind) {
      case 'accepted':
        return { outcome: { kind: 'delivered', response: result.response }, relay };
      case 'refused':
        return { outcome: fromReply(result.response), relay };
      case 'no_reply':
        return { outcome: { kind: 'ambiguous', reason: `no reply after the data from ${target.hostname} [${target.address}]: ${result.error}` }, relay };
      case 'not_submitted':
        // A 4xx/5xx greeting or a dropped connection: this host did not take it; try the next.
        failures.push(`${target.hostname} [${target.address}]: ${result.response ?? result.error}`);
    }
  }
  const lastReply = failures.map((f) => /\b([45]\d\d[ -].*)$/.exec(f)?.[1]).find(Boolean);
  const delayType = lastReply ? (classifyReply(lastReply).delayType ?? 'TransientCommunicationFailure') : 'TransientCommunicationFailure';
  return { outcome: { kind: 'deferred', response: failures.join('; ').slice(0, 1000) || 'no host answered', delayType }, relay };
}

async function tryTarget(pool: SessionPool, target: SmtpTarget, input: AttemptInput): Promise<{ attempt: SmtpAttempt; tls: TlsInfo | null }> {
  let tls: TlsInfo | null = null;
  for (let tries = 0; tries < 2; tries++) {
    let lease;
    try {
      lease = await pool.acquire(target);
    } catch (err) {
      const e = err as { code?: string; originalCode?: string; command?: string; message: string; response?: string; responseCode?: number };
      const failure = failedTlsResult(e);
      if (failure) input.observeTls?.(target.hostname, failure);
      return { attempt: { kind: 'not_submitted', error: `${e.code ?? 'ERROR'}: ${e.message}`, response: e.responseCode ? e.response : undefined }, tls };
    }
    tls = lease.session.tls;
    if (!lease.reused) input.observeTls?.(target.hostname, sessionTlsResult(tls));
    const result = await lease.session.send(input.envelope, input.message, input.beforeData);
    if (result.kind === 'accepted') {
      lease.release(true);
      return { attempt: result, tls };
    }
    if (result.kind === 'refused' && lease.session.usable) {
      lease.release(await lease.session.reset());
      return { attempt: result, tls };
    }
    lease.release(false);
    // A reused session the server had closed meanwhile: one more try on a fresh one.
    if (result.kind === 'not_submitted' && lease.reused) continue;
    return { attempt: result, tls };
  }
  return { attempt: { kind: 'not_submitted', error: 'the connection closed twice' }, tls };
}

/** An SMTP reply (or a no-route reason in reply form) through the rules table. */
export function fromReply(response: string): DeliveryOutcome {
  const c = classifyReply(response);
  switch (c.outcome) {
    case 'delivered':
      return { kind: 'delivered', response };
    case 'deferred':
      return { kind: 'deferred', response, delayType: c.delayType ?? 'General' };
    case 'bounced':
      return {
        kind: 'bounced', response,
        bounce: { type: c.bounceType ?? 'Undetermined', subType: c.subType ?? 'Undetermined', message: c.reply.text || response, diagnosticCode: [response] },
      };
  }
}
