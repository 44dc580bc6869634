import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { adminCall } from '../../bin/admin-client.js';
import { waitFor } from './deadline.js';
import { freePort } from './ports.js';

// The real executable as an operator runs it (`bin/svc start`), for faults that need a process
// of its own: SIGTERM, kill -9, a corrupt file at start. Only the given settings reach it.

// Compiled to dist/test/helpers/: the project is three folders up.
const root = resolve(import.meta.dirname, '../../..');
export const svcBin = join(root, 'bin', 'svc');

export interface SvcProcess {
  proc: ChildProcess;
  baseUrl: string;
  httpPort: number;
  smtpPort: number;
  adminSocket: string;
  /** Everything written so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
  /** Resolves when /health answers (rejects if the process exits first). */
  ready(timeoutMs?: number): Promise<void>;
  /** A team and a full_access key made over the admin socket. */
  newTeam(name: string): Promise<{ teamId: string; token: string }>;
}

export interface SvcOptions {
  dataDir: string;
  roles?: string;
  env?: Record<string, string>;
  httpPort?: number;
  smtpPort?: number;
  /** A command svc runs under (e.g. strace …): `proc` is then that command's process. */
  wrap?: string[];
}

export async function spawnSvc(options: SvcOptions): Promise<SvcProcess> {
  const httpPort = options.httpPort ?? (await freePort());
  const smtpPort = options.smtpPort ?? (await freePort());
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SVC_DATA_DIR: options.dataDir,
    SVC_HTTP_HOST: '127.0.0.1', SVC_HTTP_PORT: String(httpPort), SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(smtpPort),
    SVC_LOG_LEVEL: 'info', SVC_MAIL_HOSTNAME: 'mta.svc-test.net', SVC_SCANNER_CLAMD: '', ...options.env,
  };
  const started = performance.now();
  const command = [...(options.wrap ?? []), svcBin, 'start', '--role', options.roles ?? 'all'];
  const proc = spawn(command[0]!, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>((r) => {
    proc.once('exit', (code, signal) => r({ code, signal, atMs: performance.now() - started }));
  });
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  const adminSocket = join(options.dataDir, 'admin.sock');
  return {
    proc, baseUrl, httpPort, smtpPort, adminSocket, exited,
    output: () => ({ stdout, stderr }),
    async ready(timeoutMs = 60_000) {
      let gone = false;
      void exited.then(() => { gone = true; });
      await waitFor('svc to answer /health', async () => {
        if (gone) throw new Error(`svc exited before it answered: ${stderr.trim()}`);
        return fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(5000) }).then((r) => r.ok, () => false);
      }, timeoutMs, 100).catch((err: Error) => { throw new Error(`${err.message}: ${stderr.trim()}`, { cause: err }); });
    },
    async newTeam(name) {
      const team = await adminCall(adminSocket, 'POST', '/admin/teams', { name });
      const teamId = (team.body as { id: string }).id;
      const key = await adminCall(adminSocket, 'POST', '/admin/api-keys', { team: teamId, name: `${name} key` });
      return { teamId, token: (key.body as { token: string }).token };
    },
  };
}
