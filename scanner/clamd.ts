import NodeClam, { type ScanResult } from 'clamscan';
import type { Scanner, Verdict } from './verdict.js';

export type ClamdTarget = { socket: string } | { host: string; port: number };

/** `SVC_SCANNER_CLAMD`: a socket path, or host:port. */
export function parseClamdTarget(value: string): ClamdTarget {
  const hostPort = /^(\[[^\]]+\]|[^/:]+):(\d{1,5})$/.exec(value);
  if (hostPort) return { host: hostPort[1]!.replace(/^\[|\]$/g, ''), port: Number(hostPort[2]) };
  return { socket: value };
}

/** A clamd client through clamscan, talking only to the daemon (no local binaries). */
export async function clamdClient(target: ClamdTarget, timeoutMs: number): Promise<NodeClam> {
  return new NodeClam().init({
    removeInfected: false,
    quarantineInfected: false,
    debugMode: false,
    clamscan: { active: false },
    clamdscan: {
      ...('socket' in target ? { socket: target.socket, host: false, port: false } : { socket: false, host: target.host, port: target.port }),
      timeout: timeoutMs,
      localFallback: false,
      active: true,
      bypassTest: true,
    },
    preference: 'clamdscan',
  } as never);
}

/** Readiness probe: clamd answers PING. */
export async function pingClamd(client: NodeClam): Promise<void> {
  const socket = (await client.ping()) as { end(): void };
  socket.end();
}

export interface ClamdScannerOptions {
  target: ClamdTarget;
  /** svc's own deadline around each scan: clamscan does not keep its timeout against a frozen clamd. */
  timeoutMs: number;
  maxBytes: number;
}

/** Scans through clamd INSTREAM (clamscan's scanStream); every failure becomes an `error` verdict. */
export function clamdScanner(options: ClamdScannerOptions): Scanner {
  let client: Promise<NodeClam> | undefined;
  const connect = () => (client ??= clamdClient(options.target, options.timeoutMs).catch((err) => {
    client = undefined;
    throw err;
  }));
  return {
    enabled: true,
    maxBytes: options.maxBytes,
    async scan(input) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<Verdict>((resolve) => {
        timer = setTimeout(() => resolve({ kind: 'error', reason: `no verdict within ${options.timeoutMs} ms` }), options.timeoutMs);
      });
      const scanned = (async (): Promise<Verdict> => {
        try {
          return toVerdict(await (await connect()).scanStream(input));
        } catch (err) {
          return { kind: 'error', reason: clamdErrorText(err) };
        }
      })();
      try {
        const verdict = await Promise.race([scanned, deadline]);
        // A scan that lost the race must not hold the caller's data stream open.
        if (verdict.kind === 'error') input.destroy();
        return verdict;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function toVerdict(result: ScanResult): Verdict {
  if (result.isInfected === true) {
    const signature = result.viruses[0] ?? 'unknown';
    return { kind: 'infected', signature };
  }
  if (result.isInfected === false) return { kind: 'clean' };
  return { kind: 'error', reason: 'clamd gave no verdict' };
}

function clamdErrorText(err: unknown): string {
  const e = err as { message?: string; data?: { err?: { code?: string } } };
  return e?.data?.err?.code ? `${e.message ?? 'clamd error'} (${e.data.err.code})` : String(e?.message ?? err);
}
