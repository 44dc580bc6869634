// A client for the slice of Cloudflare's v4 API that domain autoconfiguration uses:
// GET /user/tokens/verify, GET /zones, GET and POST /zones/{zone_id}/dns_records.
// Every answer is Cloudflare's envelope {success, errors[], messages[], result, result_info?}.

export interface CloudflareZone {
  id: string;
  name: string;
}

export interface CloudflareRecord {
  id: string;
  type: string;
  /** Absolute name. */
  name: string;
  content: string;
  priority?: number;
  proxied?: boolean;
}

export interface NewCloudflareRecord {
  type: 'TXT' | 'CNAME' | 'MX';
  name: string;
  content: string;
  priority?: number;
  comment?: string;
}

export interface CloudflareClient {
  verifyToken(): Promise<{ id: string; status: string }>;
  /** The zones the token can see (at most the first 50) and how many there are in all. */
  zones(): Promise<{ zones: CloudflareZone[]; total: number }>;
  records(zoneId: string, name: string): Promise<CloudflareRecord[]>;
  createRecord(zoneId: string, record: NewCloudflareRecord): Promise<CloudflareRecord>;
}

/** Cloudflare answered with an error (`status` is the HTTP status; 0 when it could not be reached). */
export class CloudflareError extends Error {
  // Core tells a provider refusal by its name and status (it never imports this room's values).
  override readonly name = 'CloudflareError';
  constructor(message: string, readonly status: number, readonly codes: number[] = []) {
    super(message);
  }
}

interface Envelope<T> {
  success: boolean;
  errors?: { code: number; message: string }[];
  result: T;
  result_info?: { total_count?: number };
}

export function cloudflareClient(baseUrl: string, token: string, timeoutMs = 10_000): CloudflareClient {
  const base = baseUrl.replace(/\/+$/, '');
  async function call<T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> {
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new CloudflareError(`Cloudflare could not be reached: ${(err as Error).message}`, 0);
    }
    const envelope = (await res.json().catch(() => undefined)) as Envelope<T> | undefined;
    if (!res.ok || !envelope?.success) {
      const errors = envelope?.errors ?? [];
      throw new CloudflareError(errors.map((e) => `${e.code}: ${e.message}`).join('; ') || `HTTP ${res.status}`, res.status, errors.map((e) => e.code));
    }
    return envelope;
  }
  return {
    async verifyToken() {
      return (await call<{ id: string; status: string }>('GET', '/user/tokens/verify')).result;
    },
    async zones() {
      const answer = await call<CloudflareZone[]>('GET', '/zones?per_page=50');
      return { zones: answer.result, total: answer.result_info?.total_count ?? answer.result.length };
    },
    async records(zoneId, name) {
      const query = new URLSearchParams({ name, per_page: '100' });
      return (await call<CloudflareRecord[]>('GET', `/zones/${encodeURIComponent(zoneId)}/dns_records?${query}`)).result;
    },
    async createRecord(zoneId, record) {
      // ttl 1 is "automatic"; svc's records are never proxied (spec: DNS only).
      const body = { ...record, ttl: 1, ...(record.type === 'CNAME' ? { proxied: false } : {}) };
      return (await call<CloudflareRecord>('POST', `/zones/${encodeURIComponent(zoneId)}/dns_records`, body)).result;
    },
  };
}
