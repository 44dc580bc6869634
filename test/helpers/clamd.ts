import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitWithin, waitFor } from './deadline.js';

// A real clamd (Debian's clamav-daemon) for one test file: a temp DatabaseDirectory holding only a
// custom .ndb signature for the EICAR test string (so nothing is downloaded; detection names end in
// .UNOFFICIAL), a Unix socket in a temp folder, Foreground so the test owns the process.

export const CLAMD_BIN = '/usr/sbin/clamd';

/** The EICAR anti-virus test string, assembled so this source file itself is not a test virus. */
export const EICAR = ['X5O!P%@AP[4\\PZX54(P^)7CC)7}$', 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'].join('');

export const EICAR_SIGNATURE = 'Svc.Test.EICAR';

export interface TestClamd {
  socket: string;
  pid: number;
  /** SIGSTOP: clamd accepts connections (the kernel does) but never answers. */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

export const clamdInstalled = (): boolean => existsSync(CLAMD_BIN);

export async function startTestClamd(): Promise<TestClamd> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-clamd-'));
  const db = join(dir, 'db');
  const socket = join(dir, 'clamd.sock');
  const hex = Buffer.from(EICAR).toString('hex');
  mkdirSync(db);
  writeFileSync(join(db, 'svc-test.ndb'), `${EICAR_SIGNATURE}:0:*:${hex}\n`);
  const conf = join(dir, 'clamd.conf');
  writeFileSync(conf, [
    `DatabaseDirectory ${db}`,
    `LocalSocket ${socket}`,
    `TemporaryDirectory ${dir}`,
    `PidFile ${join(dir, 'clamd.pid')}`,
    'Foreground yes',
    '',
  ].join('\n'));
  const child: ChildProcess = spawn(CLAMD_BIN, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => { stderr += c.toString(); });
  await waitForPong(socket, child, () => stderr);
  return {
    socket,
    pid: child.pid!,
    freeze: () => { child.kill('SIGSTOP'); },
    thaw: () => { child.kill('SIGCONT'); },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exitWithin('clamd to exit after SIGTERM (SIGKILL after 5 s)', child, 30_000).finally(() => clearTimeout(timer));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPong(socket: string, child: ChildProcess, stderr: () => string): Promise<void> {
  await waitFor('clamd to answer PING', async () => {
    if (child.exitCode !== null) throw new Error(`clamd exited (${child.exitCode}): ${stderr()}`);
    return existsSync(socket) && (await ping(socket));
  }, 60_000, 50).catch((err: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${err.message}: ${stderr()}`, { cause: err });
  });
}

function ping(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(socket);
    let reply = '';
    s.on('connect', () => s.write('zPING\0'));
    s.on('data', (c) => { reply += c.toString(); });
    s.on('end', () => resolve(reply.startsWith('PONG')));
    s.on('error', () => resolve(false));
    s.setTimeout(2000, () => { s.destroy(); resolve(false); });
  });
}
