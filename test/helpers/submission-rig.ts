import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import nodemailer, { type Transporter } from 'nodemailer';
import type { InboundRole } from '../../bin/roles/inbound.js';
import { startTestAppliance, type TestAppliance } from './appliance.js';
import { DEFAULT_WAIT_MS, eventWithin, withDeadline } from './deadline.js';
import type { TestDnsServer } from './dns-server.js';
import { mailZone } from './email-fixtures.js';
import { startFakeMx, type FakeMx } from './fake-mx.js';
import { freePort } from './ports.js';
import { takeReplies } from './raw-smtp.js';
import { fakeSendingDomains, type FakeDomains } from './sending.js';

// A real appliance (api, inbound with SMTP submission, outbound) on loopback: submission on two
// free ports with the self-signed certificate, mail for inbox-one.net delivered to a scripted
// fake MX through the test DNS server, sending domains verified in memory (DKIM keys published).

export interface SubmissionRig {
  app: TestAppliance;
  dns: TestDnsServer;
  mx: FakeMx;
  domains: FakeDomains;
  /** STARTTLS port (587's role). */
  port: number;
  /** Implicit TLS port (465's role). */
  securePort: number;
  /** A nodemailer transport logged in with `pass` (user `resend` unless given). */
  transport(pass: string, options?: { implicitTls?: boolean; user?: string; localAddress?: string; pool?: boolean }): Transporter;
  /** The email id a 250 reply names. */
  queuedId(response: string | undefined): string;
  stop(): Promise<void>;
}

export async function startSubmissionRig(env: Record<string, string> = {}, logDestination?: { write(line: string): void }): Promise<SubmissionRig> {
  const dns = await mailZone(['inbox-one.net']);
  const mx = await startFakeMx({ dns: dns.address });
  const app = await startTestAppliance({
    roles: ['api', 'inbound', 'outbound'],
    logDestination,
    env: {
      SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: '0', SVC_SUBMISSION_PORT: String(await freePort()), SVC_SUBMISSIONS_PORT: String(await freePort()),
      SVC_SUBMISSION_ALLOW_SELF_SIGNED: 'true', SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port),
      ...env,
    },
  });
  const inbound = app.appliance.running.find((r) => r.name === 'inbound') as InboundRole;
  const listeners = inbound.submission?.listeners ?? [];
  const port = listeners.find((l) => !l.implicitTls)?.port;
  const securePort = listeners.find((l) => l.implicitTls)?.port;
  if (!port || !securePort) throw new Error(`submission is not listening: ${JSON.stringify(listeners)}`);
  const domains = fakeSendingDomains(app, dns);
  // Keys pinned to one of these domains are made through the API keys service, which asks this.
  app.appliance.services.domains.isVerifiedDomain = async (teamId, domainId) => domains.all().some((d) => d.teamId === teamId && d.id === domainId);
  const transports: Transporter[] = [];
  return {
    app, dns, mx, domains, port, securePort,
    transport(pass, options = {}) {
      // Bounded like every wait in a test (the library's own socket timeout is ten minutes of silence).
      const transport = nodemailer.createTransport({
        pool: !!options.pool, host: '127.0.0.1', port: options.implicitTls ? securePort : port, secure: !!options.implicitTls, requireTLS: !options.implicitTls,
        auth: { user: options.user ?? 'resend', pass }, tls: { rejectUnauthorized: false }, localAddress: options.localAddress,
        connectionTimeout: DEFAULT_WAIT_MS, greetingTimeout: DEFAULT_WAIT_MS, socketTimeout: 2 * DEFAULT_WAIT_MS,
      });
      transports.push(transport);
      return transport;
    },
    queuedId(response) {
      const id = /^250 2\.0\.0 Ok: queued as ([0-9a-f-]{36})$/.exec(response ?? '')?.[1];
      if (!id) throw new Error(`not a queued reply: ${response}`);
      return id;
    },
    async stop() {
      for (const transport of transports) transport.close();
      await app.stop();
      await mx.stop();
      await dns.stop();
    },
  };
}

/** The EHLO replies of a STARTTLS session: before the upgrade, and after it (inside TLS). */
export async function ehloAroundStartTls(port: number): Promise<{ before: string; starttls: string; after: string }> {
  const socket = tcpConnect({ port, host: '127.0.0.1' });
  await eventWithin('a connection to the submission port', socket, 'connect');
  const plain = replyReader(socket);
  await plain.next();
  socket.write('EHLO client.example\r\n');
  const before = await plain.next();
  socket.write('STARTTLS\r\n');
  const starttls = await plain.next();
  plain.stop();
  const secure = tlsConnect({ socket, rejectUnauthorized: false });
  await eventWithin('the TLS handshake', secure, 'secureConnect');
  const inside = replyReader(secure);
  secure.write('EHLO client.example\r\n');
  const after = await inside.next();
  secure.destroy();
  return { before, starttls, after };
}

function replyReader(stream: NodeJS.ReadableStream): { next(): Promise<string>; stop(): void } {
  let buffer = '';
  const ready: string[] = [];
  let waiting: ((reply: string) => void) | undefined;
  const onData = (chunk: Buffer) => {
    const taken = takeReplies(buffer + chunk.toString('latin1'));
    buffer = taken.rest;
    ready.push(...taken.replies);
    if (waiting && ready.length) { const w = waiting; waiting = undefined; w(ready.shift()!); }
  };
  stream.on('data', onData);
  return {
    next: () => withDeadline('an SMTP reply', new Promise<string>((resolve) => {
      if (ready.length) return resolve(ready.shift()!);
      waiting = resolve;
    })),
    stop: () => { stream.off('data', onData); stream.pause(); },
  };
}
