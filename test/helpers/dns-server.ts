import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import * as packet from 'dns-packet';
import { withDeadline } from './deadline.js';
import { freePort } from './ports.js';

export type ZoneRecord =
  | { type: 'A'; value: string }
  | { type: 'AAAA'; value: string }
  | { type: 'MX'; exchange: string; priority: number }
  | { type: 'TXT'; value: string | string[] }
  | { type: 'CNAME'; value: string }
  | { type: 'NS'; value: string }
  | { type: 'PTR'; value: string };

/** name → records; or a failure the server plays for that name. Names are absolute, no dot at the end. */
export type Zone = Map<string, ZoneRecord[] | 'SERVFAIL' | 'TIMEOUT'>;

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for SVC_DNS_SERVERS. */
  address: string;
  zone: Zone;
  set(name: string, records: ZoneRecord[] | 'SERVFAIL' | 'TIMEOUT'): void;
  add(name: string, record: ZoneRecord): void;
  remove(name: string): void;
  queries: { name: string; type: string }[];
  stop(): Promise<void>;
}

/**
 * A real DNS server on loopback (UDP and TCP, same port) answering from a zone the test edits.
 * Wire format by dns-packet; the rules are plain DNS: CNAME chains followed inside the zone,
 * NXDOMAIN for names with nothing at or below them, NODATA otherwise.
 */
export async function startDnsServer(initial: Record<string, ZoneRecord[]> = {}): Promise<TestDnsServer> {
  const zone: Zone = new Map(Object.entries(initial).map(([k, v]) => [normal(k), v]));
  const queries: { name: string; type: string }[] = [];
  const port = await freePort();
  const udp = createSocket('udp4');
  udp.on('message', (msg, rinfo) => {
    const reply = answer(zone, queries, msg);
    if (reply) udp.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => udp.bind(port, '127.0.0.1', () => resolve()));
  const open = new Set<TcpSocket>();
  const tcp = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        const reply = answer(zone, queries, buffered.subarray(2, 2 + length));
        buffered = buffered.subarray(2 + length);
        if (reply) socket.write(Buffer.concat([Buffer.from([reply.length >> 8, reply.length & 255]), reply]));
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => tcp.listen(port, '127.0.0.1', () => resolve()));
  return {
    address: `127.0.0.1:${port}`,
    zone,
    queries,
    set: (name, records) => { zone.set(normal(name), records); },
    add: (name, record) => {
      const current = zone.get(normal(name));
      zone.set(normal(name), Array.isArray(current) ? [...current, record] : [record]);
    },
    remove: (name) => { zone.delete(normal(name)); },
    stop: () => {
      // A resolver may keep its TCP connection open: closing the server waits for none.
      for (const socket of open) socket.destroy();
      return closeBoth(udp, tcp);
    },
  };
}

function answer(zone: Zone, log: { name: string; type: string }[], msg: Buffer): Buffer | undefined {
  let query: packet.Packet;
  try {
    query = packet.decode(msg);
  } catch {
    return undefined;
  }
  const question = query.questions?.[0];
  if (!question) return undefined;
  log.push({ name: normal(question.name), type: question.type });
  const entry = zone.get(normal(question.name));
  if (entry === 'TIMEOUT') return undefined;
  const base = { id: query.id, type: 'response' as const, questions: [question] };
  if (entry === 'SERVFAIL') return packet.encode({ ...base, flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | 2 });
  const answers = resolveChain(zone, normal(question.name), question.type, 0);
  const exists = answers.length > 0 || [...zone.keys()].some((n) => n === normal(question.name) || n.endsWith(`.${normal(question.name)}`));
  const rcode = exists ? 0 : 3; // NXDOMAIN
  return packet.encode({ ...base, flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | rcode, answers });
}

function resolveChain(zone: Zone, name: string, type: string, depth: number): packet.Answer[] {
  const records = zone.get(name);
  if (!Array.isArray(records) || depth > 8) return [];
  const cname = records.find((r) => r.type === 'CNAME');
  if (cname && type !== 'CNAME') {
    const target = normal((cname as { value: string }).value);
    return [toAnswer(name, cname), ...resolveChain(zone, target, type, depth + 1)];
  }
  return records.filter((r) => r.type === type).map((r) => toAnswer(name, r));
}

function toAnswer(name: string, record: ZoneRecord): packet.Answer {
  const common = { name, ttl: 60, class: 'IN' as const };
  switch (record.type) {
    case 'MX':
      return { ...common, type: 'MX', data: { exchange: record.exchange, preference: record.priority } };
    case 'TXT':
      return { ...common, type: 'TXT', data: (Array.isArray(record.value) ? record.value : [record.value]).map((s) => Buffer.from(s)) };
    default:
      return { ...common, type: record.type, data: record.value } as packet.Answer;
  }
}

const normal = (name: string) => name.toLowerCase().replace(/\.$/, '');

function closeBoth(udp: Socket, tcp: Server): Promise<void> {
  return withDeadline('the test DNS server to close', new Promise((resolve) => {
    udp.close(() => tcp.close(() => resolve()));
  }));
}
