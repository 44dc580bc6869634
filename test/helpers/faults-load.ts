import { setTimeout as sleep } from 'node:timers/promises';
import nodemailer from 'nodemailer';
import { publish, type WireRecord } from './domain-fixtures.js';
import type { TestDnsServer } from './dns-server.js';

// A steady mixed load for fault tests and bench/faults: each worker alternates an authenticated
// GET and a POST /emails (each send with its own Idempotency-Key), and records every answer with
// how long it took. A request still unanswered after `hangMs` is aborted and recorded as a hang.

export interface LoadRecord {
  kind: 'get' | 'send';
  /** ms since the load started. */
  at: number;
  ms: number;
  /** HTTP status, or 0 when the request failed without an answer (connection refused, aborted). */
  status: number;
  hung: boolean;
  /** For a send answered 200: the email id. */
  id?: string;
  key?: string;
  error?: string;
}

export interface LoadOptions {
  baseUrl: string;
  token: string;
  workers: number;
  /** The body of send number `n`. */
  sendBody(n: number): unknown;
  /** Abort (and count as a hang) after this long. */
  hangMs: number;
  /** Pause between one worker's requests. */
  pauseMs?: number;
  /** Only sends (no GETs). */
  sendsOnly?: boolean;
}

export interface Load {
  /** performance.now() when the load began: `at` values count from here. */
  startedAt: number;
  records: LoadRecord[];
  /** Sends answered 200: Idempotency-Key → email id. */
  accepted: Map<string, string>;
  stop(): Promise<void>;
}

export function startLoad(options: LoadOptions): Load {
  const records: LoadRecord[] = [];
  const accepted = new Map<string, string>();
  const started = performance.now();
  let running = true;
  let counter = 0;
  const one = async (kind: LoadRecord['kind']) => {
    const n = counter++;
    const key = kind === 'send' ? `load-${n}` : undefined;
    const at = performance.now();
    const record: LoadRecord = { kind, at: Math.round(at - started), ms: 0, status: 0, hung: false, key };
    try {
      const res = await fetch(options.baseUrl + (kind === 'send' ? '/emails' : '/emails?limit=1'), {
        method: kind === 'send' ? 'POST' : 'GET',
        headers: {
          authorization: `Bearer ${options.token}`, 'user-agent': 'svc-faults/1.0', 'content-type': 'application/json',
          ...(key ? { 'idempotency-key': key } : {}),
        },
        body: kind === 'send' ? JSON.stringify(options.sendBody(n)) : undefined,
        signal: AbortSignal.timeout(options.hangMs),
      });
      const text = await res.text();
      record.status = res.status;
      if (kind === 'send' && res.status === 200) {
        record.id = (JSON.parse(text) as { id: string }).id;
        accepted.set(key!, record.id);
      } else if (res.status >= 400) record.error = text.slice(0, 200);
    } catch (err) {
      const e = err as Error;
      record.hung = e.name === 'TimeoutError';
      record.error = e.message;
    }
    record.ms = Math.round(performance.now() - at);
    records.push(record);
    return record;
  };
  const worker = async (w: number) => {
    for (let i = 0; running; i++) {
      const record = await one(options.sendsOnly || (i + w) % 2 === 0 ? 'send' : 'get');
      // A client backs off while the server is away instead of spinning on refused connections.
      await sleep(record.status === 0 || record.status >= 500 ? 100 : options.pauseMs ?? 10);
    }
  };
  const workers = Array.from({ length: options.workers }, (_, w) => worker(w));
  return {
    startedAt: started,
    records,
    accepted,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

/** Counts of a load's answers by kind and status, e.g. `send 200: 120, send 503: 4, get 200: 118`. */
export function summarise(records: readonly LoadRecord[]): string {
  const counts = new Map<string, number>();
  for (const r of records) {
    const label = `${r.kind} ${r.hung ? 'hung' : r.status || 'no answer'}`;
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts].sort().map(([k, v]) => `${k}: ${v}`).join(', ');
}

/** A side load whose answers are kept by its own kind (batch sends, inbound SMTP). */
export interface SideLoad {
  records: SideRecord[];
  /** What was taken: batch Idempotency-Key → email ids; inbound message number → received id. */
  accepted: Map<string, string[]>;
  stop(): Promise<void>;
}

export interface SideRecord {
  at: number;
  ms: number;
  /** HTTP status or SMTP reply code; 0 when no answer came. */
  status: number;
  error?: string;
}

/**
 * Workers posting POST /emails/batch (`size` emails each, each batch with its own
 * Idempotency-Key); the ids of every batch answered 200 are kept.
 */
export function startBatchLoad(options: { baseUrl: string; token: string; workers: number; size: number; hangMs: number; body(n: number, i: number): unknown }): SideLoad {
  return runSideLoad(options.workers, 200, async (n, record, accepted) => {
    const key = `batch-${n}`;
    const res = await fetch(`${options.baseUrl}/emails/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json', 'idempotency-key': key, 'user-agent': 'svc-faults/1.0' },
      body: JSON.stringify(Array.from({ length: options.size }, (_, i) => options.body(n, i))),
      signal: AbortSignal.timeout(options.hangMs),
    });
    const text = await res.text();
    record.status = res.status;
    if (res.status === 200) accepted.set(key, (JSON.parse(text) as { data: { id: string }[] }).data.map((d) => d.id));
    else record.error = text.slice(0, 200);
  });
}

/**
 * Workers delivering messages to svc's inbound SMTP listener, one session per message (a client
 * reconnects after a crash anyway). Every message answered 250 is kept with the id svc named in
 * its reply (`queued as <id>`); anything else is the sender's to retry, as SMTP clients do.
 */
export function startInboundLoad(options: { host: string; port: number; workers: number; from: string; to: string; hangMs: number }): SideLoad {
  const run = Date.now().toFixed(0);
  return runSideLoad(options.workers, 250, async (n, record, accepted) => {
    const transport = nodemailer.createTransport({
      host: options.host, port: options.port, secure: false, ignoreTLS: true,
      connectionTimeout: options.hangMs, greetingTimeout: options.hangMs, socketTimeout: options.hangMs,
    });
    try {
      const info = await transport.sendMail({
        envelope: { from: options.from, to: [options.to] }, from: options.from, to: options.to,
        subject: `Inbound soak ${n}`, text: `Inbound message ${n}`, messageId: `<inbound-${n}-${run}@soak.example>`,
      });
      record.status = Number(info.response.slice(0, 3));
      const id = /queued as (\S+)/.exec(info.response)?.[1];
      if (id) accepted.set(String(n), [id]);
    } catch (err) {
      record.status = (err as { responseCode?: number }).responseCode ?? 0;
      throw err;
    } finally {
      transport.close();
    }
  });
}

/**
 * `workers` loops each making attempt after attempt until stopped, every attempt recorded (time,
 * duration, status; an error's message), pausing briefly after a success and longer after anything else.
 */
function runSideLoad(workers: number, okStatus: number, attempt: (n: number, record: SideRecord, accepted: Map<string, string[]>) => Promise<void>): SideLoad {
  const records: SideRecord[] = [];
  const accepted = new Map<string, string[]>();
  const started = performance.now();
  let running = true;
  let counter = 0;
  const worker = async () => {
    while (running) {
      const n = counter++;
      const at = performance.now();
      const record: SideRecord = { at: Math.round(at - started), ms: 0, status: 0 };
      try {
        await attempt(n, record, accepted);
      } catch (err) {
        record.error = (err as Error).message;
      }
      record.ms = Math.round(performance.now() - at);
      records.push(record);
      await sleep(record.status === okStatus ? 20 : 100);
    }
  };
  const loops = Array.from({ length: workers }, () => worker());
  return { records, accepted, async stop() { running = false; await Promise.all(loops); } };
}

/** A domain with receiving on, its records published in the test zone and verified through the API. */
export async function receivingDomainThroughApi(baseUrl: string, token: string, zone: TestDnsServer, name: string): Promise<void> {
  const api = (method: string, path: string, body?: unknown) => fetch(baseUrl + path, {
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined,
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));
  const created = await api('POST', '/domains', { name, capabilities: { receiving: 'enabled' } });
  if (created.status !== 201 && created.status !== 200) throw new Error(`POST /domains ${name}: ${JSON.stringify(created.body)}`);
  for (const r of created.body.records as WireRecord[]) publish(zone, name, r);
  for (let i = 0; i < 40; i++) {
    const verified = await api('POST', `/domains/${created.body.id}/verify`);
    if (verified.body.status === 'verified') return;
    await sleep(500);
  }
  throw new Error(`receiving domain ${name} did not verify`);
}

/** A webhook endpoint (`SVC_WEBHOOKS_ALLOW_PRIVATE` lets it be on loopback) for `events`. */
export async function webhookEndpoint(baseUrl: string, token: string, url: string, events: string[]): Promise<void> {
  const r = await fetch(`${baseUrl}/webhooks`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint: url, events }),
  });
  if (r.status !== 200 && r.status !== 201) throw new Error(`POST /webhooks: ${r.status} ${await r.text()}`);
}
