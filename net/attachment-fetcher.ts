import { isIP } from 'node:net';
import { parse as parseDisposition } from 'content-disposition';
import { Agent, request } from 'undici';
import type { DnsResolver } from '../dns/resolver.js';
import { judgeAddress, pinnedLookup } from './url-policy.js';

/** An attachment's bytes as fetched, with what the server said of its type and name. */
export type AttachmentFetcher = (url: string, maxBytes: number) => Promise<{ content: Buffer; contentType?: string; filename?: string }>;

// Attachments given by `path` are fetched by svc itself, through the same address policy as
// webhooks: only globally routable addresses (loopback and private ranges only when the operator
// allows them), every connection's addresses judged again (DNS rebinding), no redirects, a
// deadline, and a size cap read as the body streams in. nodemailer never fetches anything
// (its file and URL access stay disabled).

export function attachmentFetcher(options: { resolver: DnsResolver; allowPrivate: boolean; timeoutMs: number }): AttachmentFetcher {
  const agent = new Agent({
    connect: { lookup: pinnedLookup(options.resolver, options.allowPrivate), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs,
  });
  return async (url, maxBytes) => {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const verdict = judgeAddress(host, options.allowPrivate);
      if (!verdict.ok) throw new Error(`refused address: ${verdict.reason}`);
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    try {
      const res = await request(url, { method: 'GET', dispatcher: agent, signal: controller.signal, headers: { 'user-agent': 'Svc-Attachments/1.0' } });
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => undefined);
        throw new Fetched(`the server answered ${res.statusCode}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        // Leaving the loop ends the body stream.
        if (size > maxBytes) break;
        chunks.push(chunk as Buffer);
      }
      if (size > maxBytes) throw new Fetched(`larger than the ${(maxBytes / 1048576).toFixed(maxBytes < 1048576 ? 3 : 0)} MB allowed`);
      const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const filename = dispositionFilename(res.headers['content-disposition']);
      return { content: Buffer.concat(chunks), contentType: /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : undefined, filename };
    } catch (err) {
      if (err instanceof Fetched) throw err;
      if (controller.signal.aborted) throw new Error(String((controller.signal.reason as Error)?.message ?? 'aborted'));
      const e = err as NodeJS.ErrnoException & { cause?: Error };
      throw new Error((e.cause?.message ?? e.message).slice(0, 300));
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The name a Content-Disposition gives (`filename*` decoded when present), as the server wrote it. */
function dispositionFilename(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  return parseDisposition(header).parameters.filename || undefined;
}

/** A refusal decided here (status, size), passed on as it is. */
class Fetched extends Error {}
