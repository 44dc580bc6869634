import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// The benchmarks that host svc's roles in their own process report that process's memory and
// latency: they run under the V8 settings svc's processes get from bin/svc (bin/node-flags), or
// their figures would describe a process svc never runs as.

const flagsFile = join(resolve(import.meta.dirname, '../..'), 'bin', 'node-flags');

/** The flags bin/svc gives node, one a line in bin/node-flags (comments and blank lines left out). */
export function serviceNodeFlags(): string[] {
  return readFileSync(flagsFile, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/**
 * Runs this script again under the service's flags unless it already runs under them; answers
 * true in the parent, which must then stop (its exit code is the child's, already set).
 */
export function rerunUnderServiceFlags(): boolean {
  const missing = serviceNodeFlags().filter((f) => !process.execArgv.includes(f));
  if (missing.length === 0) return false;
  const child = spawnSync(process.execPath, [...missing, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exitCode = child.status ?? 1;
  return true;
}

/**
 * NODE_OPTIONS of systemd/svc-jobs.service, then `extra` (a bench's own, e.g. a CPU profile): a
 * benchmark's jobs child runs as the installed unit does.
 */
export function jobsUnitNodeOptions(extra = ''): string {
  const unit = readFileSync(join(resolve(import.meta.dirname, '../..'), 'systemd', 'svc-jobs.service'), 'utf8');
  return [/^Environment="?NODE_OPTIONS=([^"\n]*)"?$/m.exec(unit)?.[1] ?? '', extra].join(' ').trim();
}
