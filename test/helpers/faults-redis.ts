import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventWithin, exitWithin, waitFor } from './deadline.js';
import { freePort } from './ports.js';
import type { TestRedis } from './redis.js';

// A redis-server a test can hurt: kill it (-9) and start it again on the same port, stall it
// (DEBUG SLEEP, which Redis 7 only allows when started with enable-debug-command), flush it.
// It has the TestRedis shape, so startTestAppliance({ redis }) uses it like its own.

export interface FaultRedis extends TestRedis {
  /** kill -9 of the server: connections drop, the port refuses. */
  kill(): Promise<void>;
  /** A fresh server on the same port (empty: persistence is off, as in production). */
  restart(): Promise<void>;
  /** Sends `DEBUG SLEEP <seconds>` and returns at once: the server answers nobody meanwhile. */
  stall(seconds: number): Promise<void>;
  /** One command, raw; answers the first reply line. */
  command(...args: string[]): Promise<string>;
  running(): boolean;
}

export async function startFaultRedis(): Promise<FaultRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-fault-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
      '--enable-debug-command', 'local', '--loglevel', 'warning'], { stdio: ['ignore', 'ignore', 'ignore'] });
    child = proc;
    await waitFor(`redis-server on port ${port} to answer PING`, async () => {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`);
      return (await raw(port, ['PING'], 500).catch(() => '')) === '+PONG';
    }, 30_000);
  };
  const kill = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGKILL');
    await exitWithin('redis-server to exit after SIGKILL', proc, 30_000);
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    restart: launch,
    async stall(seconds) {
      const socket = createConnection({ port, host: '127.0.0.1' });
      await eventWithin('a connection to redis-server for DEBUG SLEEP', socket, 'connect', 10_000);
      socket.write(`DEBUG SLEEP ${seconds}\r\n`);
      socket.once('data', (d) => { if (!d.toString().startsWith('+OK')) console.error(`DEBUG SLEEP: ${d.toString().trim()}`); socket.destroy(); });
      socket.on('error', () => undefined);
      await sleep(50); // the command is read before the next one from anybody
    },
    command: (...args) => raw(port, args, 10_000),
    running: () => !!child && child.exitCode === null && child.signalCode === null,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One command in RESP, on its own connection; the first line of the reply. */
function raw(port: number, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.setTimeout(timeoutMs);
    socket.once('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    socket.once('data', (d) => { socket.destroy(); resolve(d.toString().split('\r\n')[0]!); });
    socket.once('error', reject);
    socket.once('timeout', () => { socket.destroy(); reject(new Error(`redis: no reply to ${args[0]} within ${timeoutMs} ms`)); });
  });
}
