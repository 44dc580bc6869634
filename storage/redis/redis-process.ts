import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const SETPRIV = '/usr/bin/setpriv';

export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
}

export interface PrivateRedisOptions {
  bin: string;
  dir: string;
  /** Unix socket path; when absent, a TCP port on 127.0.0.1. */
  socket?: string;
  port?: number;
}

/**
 * Runs a redis-server owned by this process (no persistence: Redis holds only what SQLite can
 * rebuild) and waits until it answers PING.
 */
export async function startPrivateRedis(options: PrivateRedisOptions): Promise<PrivateRedis> {
  const args = ['--save', '', '--appendonly', 'no', '--dir', options.dir, '--daemonize', 'no', '--loglevel', 'warning'];
  if (options.socket) {
    if (existsSync(options.socket)) rmSync(options.socket);
    args.push('--port', '0', '--unixsocket', options.socket, '--unixsocketperm', '700');
  } else {
    args.push('--port', String(options.port ?? 6379), '--bind', '127.0.0.1');
  }
  // Through setpriv (util-linux, on every Debian) when present, so that the kernel stops this Redis
  // should svc die without stopping it (kill -9): it would otherwise outlive svc and keep running.
  const [command, commandArgs] = existsSync(SETPRIV) ? [SETPRIV, ['--pdeathsig', 'TERM', options.bin, ...args]] : [options.bin, args];
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
  const target = options.socket ? { path: options.socket } : { port: options.port ?? 6379, host: '127.0.0.1' };
  await Promise.race([waitForPong(target, child, () => stderr), spawnError]);
  const url = options.socket ? `unix://${options.socket}` : `redis://127.0.0.1:${options.port ?? 6379}`;
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function waitForPong(target: { path: string } | { port: number; host: string }, child: ChildProcess, stderr: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited: ${stderr().trim() || `code ${child.exitCode}`}`);
    if (await pings(target)) return;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not answer PING within 5 s');
}

function pings(target: { path: string } | { port: number; host: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(target as never);
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')); });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => { socket.destroy(); resolve(false); });
  });
}
