import { connect } from 'node:net';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isNotFound, type DnsResolver } from '../dns/resolver.js';
import type { PortProbe } from '../dns/self-check.js';

// The DNS self-check's port 25 probe: does a TCP connection to `host[:port]` open within the
// deadline? Nothing is sent; the connection is closed as soon as it opens. The name is resolved
// through the injected resolver, like every lookup of svc's.

export function tcpPortProbe(resolver: DnsResolver): PortProbe {
  return async (target, timeoutMs) => {
    const parsed = parseTarget(target);
    if (!parsed) return { ok: false, reason: `"${target}" is not host[:port]` };
    let address: string | undefined;
    try {
      address = isIP(parsed.host) ? parsed.host : await firstAddress(resolver, parsed.host);
    } catch (err) {
      return { ok: false, reason: `${parsed.host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    if (!address) return { ok: false, reason: `${parsed.host} has no A or AAAA record` };
    return open(address, parsed.port, timeoutMs);
  };
}

function parseTarget(target: string): { host: string; port: number } | undefined {
  const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(target) ?? /^([^:[\]]+)(?::(\d{1,5}))?$/.exec(target);
  if (!match) return undefined;
  const port = match[2] === undefined ? 25 : Number(match[2]);
  return port >= 1 && port <= 65535 ? { host: match[1]!, port } : undefined;
}

async function firstAddress(resolver: DnsResolver, host: string): Promise<string | undefined> {
  for (const lookup of [() => resolver.resolve4(host), () => resolver.resolve6(host)]) {
    try {
      const found = await lookup();
      if (found.length > 0) return found[0];
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return undefined;
}

function open(address: string, port: number, timeoutMs: number): ReturnType<PortProbe> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ host: address, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ok: false, reason: `no answer from ${address} port ${port} within ${timeoutMs} ms` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ok: true, address, ms: Math.round(performance.now() - started) });
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ ok: false, reason: `${address} port ${port}: ${err.code ?? err.message}` });
    });
  });
}
