import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { TrackingService } from '../../core/tracking/index.js';

// The tracking routes, answered before express sees the request: a mail client's image fetch and
// a reader's click must be answered at once, and they are the API listener's hottest routes.
//   GET /t/o/<token>.gif   the 1×1 open pixel (never cached)
//   GET /t/c/<token>       302 to the link the token names
// (also under /api/v1, like every public route). The token is the whole credential: it is MACed
// (core/tracking/tokens.ts), so it is checked without touching the database, and a forged,
// altered, cut or wrong-kind token is one plain 404 — a click token can only ever send a reader
// to a link svc itself put in that message, never to one the request names. The Host does not
// matter: the domain's tracking host (a CNAME to this host) and the link base reach the same
// routes. No per-client bucket: nothing here costs more than a MAC, guessing cannot succeed, and
// recording is bounded in core/tracking/service.ts; a 429 would lose a reader's click.

const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const noStore = 'no-store, no-cache, must-revalidate, max-age=0';

const pixelHeaders = {
  'content-type': 'image/gif', 'content-length': String(GIF.length), 'cache-control': noStore, pragma: 'no-cache',
  expires: '0', 'x-content-type-options': 'nosniff',
};

const notFound = Buffer.from('Not found\n');
const notFoundHeaders = {
  'content-type': 'text/plain; charset=utf-8', 'content-length': String(notFound.length), 'cache-control': noStore,
  'x-content-type-options': 'nosniff',
};

export interface TrackingFrontOptions {
  /** Follow X-Forwarded-For for the client's address (http_trust_proxy). */
  trustProxy: boolean;
}

/** `next` (the express app) for every request that is not a tracking route. */
export function trackingFront(tracking: TrackingService, next: RequestListener, options: TrackingFrontOptions): RequestListener {
  return (req, res) => {
    const url = req.url ?? '';
    const at = url.startsWith('/t/') ? 0 : url.startsWith('/api/v1/t/') ? 7 : -1;
    if (at < 0) return next(req, res);
    serve(tracking, req, res, url.slice(at), options);
  };
}

function serve(tracking: TrackingService, req: IncomingMessage, res: ServerResponse, url: string, options: TrackingFrontOptions): void {
  const head = req.method === 'HEAD';
  if (req.method !== 'GET' && !head) {
    res.writeHead(405, { ...notFoundHeaders, allow: 'GET, HEAD' });
    return void res.end(head ? undefined : notFound);
  }
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const client = { ip: clientAddress(req, options.trustProxy), userAgent: headerText(req.headers['user-agent']), head };
  if (path.startsWith('/t/o/') && path.endsWith('.gif')) {
    if (tracking.open(path.slice(5, -4), client)) {
      res.writeHead(200, pixelHeaders);
      return void res.end(head ? undefined : GIF);
    }
  } else if (path.startsWith('/t/c/')) {
    const link = tracking.click(path.slice(5), client);
    if (link !== undefined) {
      res.writeHead(302, { location: locationOf(link), 'cache-control': noStore, 'referrer-policy': 'no-referrer', 'content-length': '0' });
      return void res.end();
    }
  }
  res.writeHead(404, notFoundHeaders);
  res.end(head ? undefined : notFound);
}

/** A Location header carries ASCII: a link written with other characters goes out in its encoded form. */
function locationOf(link: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\x21-\x7e]*$/.test(link) ? link : new URL(link).href;
}

const headerText = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value ?? '').slice(0, 512);

/** The client as express's `req.ip` sees it: the first X-Forwarded-For entry only behind a trusted proxy. */
function clientAddress(req: IncomingMessage, trustProxy: boolean): string | null {
  const forwarded = trustProxy ? headerText(req.headers['x-forwarded-for']).split(',')[0]?.trim() : undefined;
  const address = forwarded || req.socket.remoteAddress || null;
  return address?.startsWith('::ffff:') ? address.slice(7) : address;
}
