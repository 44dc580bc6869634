import { request } from 'node:http';
import { withDeadline } from './deadline.js';

// Scrapes the operator's /metrics (over the admin socket or a TCP URL) and reads samples out of
// the exposition text by name and labels.

export interface Scrape {
  status: number;
  contentType: string;
  text: string;
}

/** GET /metrics over the admin socket. */
export function scrapeSocket(socketPath: string, path = '/metrics'): Promise<Scrape> {
  const got = new Promise<Scrape>((resolve, reject) => {
    const req = request({ socketPath, method: 'GET', path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  return withDeadline(`GET ${path} on ${socketPath}`, got);
}

export async function scrapeUrl(url: string): Promise<Scrape> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Every sample of a series name: `name{a="b",…} value` lines (label values without escapes). */
export function samples(text: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[pair[1]!] = pair[2]!;
    out.push({ labels, value: Number(match[3]) });
  }
  return out;
}

/** The value of the one sample whose labels include `labels`; undefined when there is none. */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples(text, name).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** The `# TYPE` a metric is declared with. */
export const typeOf = (text: string, name: string): string | undefined => new RegExp(`^# TYPE ${name} (\\S+)$`, 'm').exec(text)?.[1];
