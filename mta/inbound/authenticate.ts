import { authenticate, type AuthenticateResult } from 'mailauth';
import type { DnsResolver } from '../../dns/resolver.js';
import { mailauthResolver } from '../../dns/mailauth-resolver.js';

// SPF, DKIM, DMARC and ARC for a received message, through mailauth with svc's injected resolver.
// The verdicts are kept with the message (they decide nothing at SMTP time: svc stores what its
// receiving domains are sent, and the reader decides what to trust).

export interface AuthContext {
  ip: string;
  helo: string;
  /** MAIL FROM ('' for the null sender). */
  sender: string;
  /** svc's host name: the authserv-id of Authentication-Results. */
  hostname: string;
}

export interface AuthSummary {
  spf: { result: string; domain: string | null } | null;
  dkim: { result: string; domain: string | null; selector: string | null; aligned: boolean }[];
  dmarc: { result: string; policy: string | null; domain: string | null } | null;
  arc: { result: string } | null;
  /** The Authentication-Results header svc would add (RFC 8601). */
  authentication_results: string | null;
  /** Set when the checks could not run at all (then every verdict above is empty). */
  error?: string;
}

/** Never throws: a failure to authenticate is itself a result kept with the message. */
export async function authenticateMessage(raw: Buffer, context: AuthContext, resolver: DnsResolver, deadlineMs: number): Promise<AuthSummary> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result within ${deadlineMs} ms`)), deadlineMs);
  });
  try {
    const result = await Promise.race([
      authenticate(raw, {
        ip: context.ip, helo: context.helo, sender: context.sender, mta: context.hostname,
        resolver: mailauthResolver(resolver), disableBimi: true,
      }),
      deadline,
    ]);
    return summarise(result);
  } catch (err) {
    return { spf: null, dkim: [], dmarc: null, arc: null, authentication_results: null, error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

function summarise(result: AuthenticateResult): AuthSummary {
  const ar = /^Authentication-Results:\s*([\s\S]*?)\r\n(?![ \t])/m.exec(result.headers);
  return {
    spf: result.spf ? { result: result.spf.status.result, domain: result.spf.domain ?? null } : null,
    dkim: result.dkim.results.map((r) => ({
      result: r.status.result, domain: r.signingDomain ?? null, selector: r.selector ?? null, aligned: !!r.status.aligned,
    })),
    dmarc: result.dmarc ? { result: result.dmarc.status.result, policy: result.dmarc.policy ?? null, domain: result.dmarc.domain ?? null } : null,
    arc: result.arc ? { result: result.arc.status.result } : null,
    authentication_results: ar ? ar[1]!.replace(/\r\n[ \t]+/g, ' ').trim() : null,
  };
}
