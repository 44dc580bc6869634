import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import type { DnsResolver } from '../dns/resolver.js';
import { judgeAddress, pinnedLookup } from './url-policy.js';

// The HTTPS side of outbound TLS: the MTA-STS policy fetch (RFC 8461 section 3.3) and the TLS-RPT
// report POST (RFC 8460 section 3). Both go to names a recipient domain controls, so both pass
// the address policy webhooks use (only routable addresses unless the operator allows private
// ones, every connection judged again), follow no redirects, and end at a deadline.

/** The trusted CAs: the system's, plus the operator's extra PEM file (`outbound_tls_ca_file`). */
export function trustedCas(extraCaFile: string): string[] | undefined {
  if (!extraCaFile) return undefined;
  return [...rootCertificates, readFileSync(extraCaFile, 'utf8')];
}

/** What a policy fetch found: the body, or why there is none (the reason is logged and reported). */
export type PolicyFetch = { kind: 'ok'; body: string } | { kind: 'failed'; reason: string };

/** Fetches `https://mta-sts.<domain>/.well-known/mta-sts.txt`. */
export type MtaStsPolicyFetcher = (domain: string) => Promise<PolicyFetch>;

export interface OutboundTlsHttpOptions {
  resolver: DnsResolver;
  allowPrivate: boolean;
  /** 443; test rigs listen elsewhere. */
  port: number;
  /** CAs to trust instead of node's defaults (trustedCas); undefined: the defaults. */
  ca?: string[];
  timeoutMs: number;
}

/** RFC 8461 section 3.3: a policy body is at most 64 KiB. */
const MAX_POLICY_BYTES = 64 * 1024;

export function mtaStsPolicyFetcher(options: OutboundTlsHttpOptions): MtaStsPolicyFetcher {
  // A fresh, verifying agent: the policy host's certificate must be valid for its name.
  const agent = new Agent({
    connect: { lookup: pinnedLookup(options.resolver, options.allowPrivate), timeout: options.timeoutMs, ca: options.ca, rejectUnauthorized: true },
    headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs,
  });
  return async (domain) => {
    const url = `https://mta-sts.${domain}${options.port === 443 ? '' : `:${options.port}`}/.well-known/mta-sts.txt`;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    try {
      const res = await request(url, { method: 'GET', dispatcher: agent, signal: controller.signal, headers: { 'user-agent': 'Svc-MTA-STS/1.0' } });
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => undefined);
        return { kind: 'failed', reason: `the policy host answered HTTP ${res.statusCode}` };
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_POLICY_BYTES) break;
        chunks.push(chunk as Buffer);
      }
      if (size > MAX_POLICY_BYTES) return { kind: 'failed', reason: 'the policy is larger than 64 KiB' };
      return { kind: 'ok', body: Buffer.concat(chunks).toString('utf8') };
    } catch (err) {
      return { kind: 'failed', reason: describe(err, controller) };
    } finally {
      clearTimeout(timer);
    }
  };
}

/** POSTs one gzipped TLS-RPT report to an `https:` rua; answers null when it was taken (2xx), else why not. */
export type TlsReportPoster = (url: string, gzipped: Buffer) => Promise<string | null>;

export function tlsReportPoster(options: Omit<OutboundTlsHttpOptions, 'port'>): TlsReportPoster {
  const agent = new Agent({
    connect: { lookup: pinnedLookup(options.resolver, options.allowPrivate), timeout: options.timeoutMs, ca: options.ca },
    headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs,
  });
  return async (url, gzipped) => {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:') return 'the rua is not an https URL';
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const verdict = judgeAddress(host, options.allowPrivate);
      if (!verdict.ok) return `refused address: ${verdict.reason}`;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    try {
      const res = await request(url, {
        method: 'POST', dispatcher: agent, signal: controller.signal, body: gzipped,
        headers: { 'content-type': 'application/tlsrpt+gzip', 'user-agent': 'Svc-TLSRPT/1.0' },
      });
      await res.body.dump().catch(() => undefined);
      return res.statusCode >= 200 && res.statusCode < 300 ? null : `the report host answered HTTP ${res.statusCode}`;
    } catch (err) {
      return describe(err, controller);
    } finally {
      clearTimeout(timer);
    }
  };
}

function describe(err: unknown, controller: AbortController): string {
  if (controller.signal.aborted) return String((controller.signal.reason as Error)?.message ?? 'aborted');
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.cause?.code ?? e.code;
  return `${code ? `${code}: ` : ''}${e.cause?.message ?? e.message}`.slice(0, 300);
}
