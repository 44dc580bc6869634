import type { DeliveryOutcome } from '../../core/emails/index.js';
import { classifyReply } from '../bounces/rules.js';
import type { Route } from './routes.js';
import type { SessionPool } from './session-pool.js';
import type { Envelope, SmtpAttempt, SmtpTarget } from './smtp-client.js';

// One recipient, one attempt: the route's hosts in order until one answers. A host that cannot
// be reached (or drops before the data) is skipped; a reply decides; data without a reply is
// ambiguous and ends the attempt — it is never sent to another host.

export interface AttemptInput {
  route: Route;
  envelope: Envelope;
  message: Buffer;
  /** Records `submitting`; the data waits for it. */
  beforeData(): Promise<boolean>;
}

export async function attemptDelivery(pool: SessionPool, input: AttemptInput): Promise<DeliveryOutcome> {
  const { route } = input;
  if (route.kind === 'no_route') return fromReply(route.reason);
  if (route.kind === 'temporary') return { kind: 'deferred', response: route.error, delayType: 'TransientCommunicationFailure' };
  const failures: string[] = [];
  for (const target of route.targets) {
    const result = await tryTarget(pool, target, input);
    switch (result.kind) {
      case 'accepted':
        return { kind: 'delivered', response: result.response };
      case 'refused':
        return fromReply(result.response);
      case 'no_reply':
        return { kind: 'ambiguous', reason: `no reply after the data from ${target.hostname} [${target.address}]: ${result.error}` };
      case 'not_submitted':
        // A 4xx/5xx greeting or a dropped connection: this host did not take it; try the next.
        failures.push(`${target.hostname} [${target.address}]: ${result.response ?? result.error}`);
    }
  }
  const lastReply = failures.map((f) => /\b([45]\d\d[ -].*)$/.exec(f)?.[1]).find(Boolean);
  return { kind: 'deferred', response: failures.join('; ').slice(0, 1000) || 'no host answered', delayType: lastReply ? (classifyReply(lastReply).delayType ?? 'TransientCommunicationFailure') : 'TransientCommunicationFailure' };
}

async function tryTarget(pool: SessionPool, target: SmtpTarget, input: AttemptInput): Promise<SmtpAttempt> {
  for (let tries = 0; tries < 2; tries++) {
    let lease;
    try {
      lease = await pool.acquire(target);
    } catch (err) {
      const e = err as { code?: string; message: string; response?: string; responseCode?: number };
      return { kind: 'not_submitted', error: `${e.code ?? 'ERROR'}: ${e.message}`, response: e.responseCode ? e.response : undefined };
    }
    const result = await lease.session.send(input.envelope, input.message, input.beforeData);
    if (result.kind === 'accepted') {
      lease.release(true);
      return result;
    }
    if (result.kind === 'refused' && lease.session.usable) {
      lease.release(await lease.session.reset());
      return result;
    }
    lease.release(false);
    // A reused session the server had closed meanwhile: one more try on a fresh one.
    if (result.kind === 'not_submitted' && lease.reused) continue;
    return result;
  }
  return { kind: 'not_submitted', error: 'the connection closed twice' };
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
