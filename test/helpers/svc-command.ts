import { spawn } from 'node:child_process';
import { withDeadline } from './deadline.js';
import { svcBin } from './faults-svc.js';

// One `bin/svc …` command as an operator runs it, to completion: its exit code and output. Killed
// after `timeoutMs`, so a command that should have ended cannot hang the test file; the bound after
// the kill covers pipes a stray grandchild might hold open.

export interface SvcRun { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

export function runSvcCommand(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<SvcRun> {
  return withDeadline(`svc ${args.join(' ')} to end`, new Promise<SvcRun>((done, fail) => {
    const child = spawn(svcBin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', fail);
    child.once('close', (code, signal) => { clearTimeout(timer); done({ code, signal, stdout, stderr }); });
  }), timeoutMs + 10_000);
}
