import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import type { DnsResolver } from '../dns/resolver.js';
import { judgeAddress, pinnedLookup } from './url-policy.js';

export const USER_AGENT = 'Svc-Webhooks/1.0';
/** How much of an answer body is kept with the attempt. */
export const RESPONSE_SNIPPET_BYTES = 1024;

export interface SendOutcome {
  /** null when no HTTP answer came (refused address, connection error, timeout). */
  statusCode: number | null;
  /** The receiver answered `webhook-delivery: abort-message`: stop retrying this message. */
  abort: boolean;
  response: string | null;
  error: string | null;
  durationMs: number;
}

/** The signature headers of one request (`wh-`, `webhook-` and `svix-` id, timestamp, signature), as core signed them. */
export type SignedHeaders = Readonly<Record<string, string>>;

export interface Sender {
  send(url: string, headers: SignedHeaders, body: string): Promise<SendOutcome>;
  close(): Promise<void>;
}

export interface SenderOptions {
  resolver: DnsResolver;
  allowPrivate: boolean;
  timeoutMs: number;
}

/**
 * POSTs signed payloads. Every connection resolves the host through the injected resolver and
 * judges each address again (DNS rebinding), IP literals are judged here because net never calls
 * `lookup` for them, redirects are not followed, and a request ends at `timeoutMs` whatever the peer does.
 */
export function webhookSender(options: SenderOptions): Sender {
  const agent = new Agent({
    connect: { lookup: pinnedLookup(options.resolver, options.allowPrivate), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 4_000,
  });
  return {
    async send(url, headers, body) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      if (isIP(host)) {
        const verdict = judgeAddress(host, options.allowPrivate);
        if (!verdict.ok) return failure(`refused address: ${verdict.reason}`, elapsed());
      }
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
      try {
        const res = await request(url, {
          method: 'POST', dispatcher: agent, signal: controller.signal, body,
          headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        });
        const response = await readSnippet(res.body);
        const delivery = res.headers['webhook-delivery'];
        const abort = (Array.isArray(delivery) ? delivery : [delivery ?? '']).some((v) => v.toLowerCase().includes('abort-message'));
        return { statusCode: res.statusCode, abort, response, error: null, durationMs: elapsed() };
      } catch (err) {
        return failure(describe(err, controller.signal), elapsed());
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => agent.close(),
  };
}

const failure = (error: string, durationMs: number): SendOutcome => ({ statusCode: null, abort: false, response: null, error, durationMs });

async function readSnippet(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_SNIPPET_BYTES) {
      body.destroy();
      break;
    }
  }
  if (size === 0) return null;
  // Cut on bytes, then drop a split UTF-8 sequence at the end rather than keep a broken character.
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks).subarray(0, RESPONSE_SNIPPET_BYTES)).replace(/\uFFFD$/, '');
}

function describe(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return String((signal.reason as Error)?.message ?? 'aborted');
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const inner = e.cause ?? e;
  const code = inner.code ?? e.code;
  const message = inner.message || e.message || String(err);
  return (code && !message.includes(code) ? `${code}: ${message}` : message).slice(0, 500);
}
