import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { procCpuSeconds } from './helpers/proc-cpu.js';

// The suite's runner (scripts/test.sh calls it): each compiled test file runs in its own plain
// `node` process, `--jobs` at a time, and prints TAP as any tap test file does; this prints one
// line a file, the whole output of a file that failed, the totals, and last one plain line
// "tests: N passed, N failed".
//
// Why not tap's own runner: it starts every test process with @tapjs/processinfo, and passes it on
// through NODE_OPTIONS to every process a test starts (each `bin/svc` role, each CLI run, each
// bench child). Its hook reads every module as it loads: importing one role took 2.0 s instead of
// 1.0 s (3.0 instead of 1.4 CPU s), and the suite is CPU-bound on two cores. It serves coverage
// and `tap --changed`, neither of which the suite uses. Its default reporter cost another ~10%.
// `npx tap <file>` still runs any one file under tap's runner.

const root = resolve(import.meta.dirname, '../..');

/** Files that take longest start first, so the last minutes are not one long file alone. */
const longestFirst = [
  'scale-out/two-nodes-postgres', 'broadcasts/crash', 'scale-out/two-processes-sqlite', 'faults/soak', 'emails/crash',
  'cli', 'data-folder-lock', 'faults/fsync', 'contact-imports/crash', 'faults/sigterm', 'automations/crash',
];

/** A file whose process outlives its tests by more than this is named: something was left open. */
const lingerNoticeMs = 5_000;

/** A file still running this long after its own timeout is hung beyond what tap can report. */
const hardLimitMs = 15 * 60_000;

interface FileResult {
  file: string;
  ok: boolean;
  total: number;
  pass: number;
  fail: number;
  skip: number;
  ms: number;
  /** How long the process stayed up after its tests ended (a timer or socket left open). */
  lingerMs: number;
  /** CPU seconds of its process and the children it waited for; undefined without /proc. */
  cpuS?: number;
  output: string;
}

/** Files listed by their CPU at the end: where to look first when the suite grows slow. */
const cpuListed = 10;

const { values, positionals } = parseArgs({ allowPositionals: true, options: { jobs: { type: 'string', default: '2' } } });
const jobs = Math.max(1, Number(values.jobs) || 2);
const files = order(positionals.length > 0 ? positionals.map((f) => relative(root, resolve(f))) : testFiles(join(root, 'dist/test')));
const timeoutS = Number((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { tap?: { timeout?: number } }).tap?.timeout ?? 180);
const running = new Set<number>();
let reapedBefore = reapedCpuSeconds();
process.once('SIGINT', () => { for (const pid of running) killGroup(pid); process.exit(130); });
await main();

async function main(): Promise<void> {
  const started = Date.now();
  const results: FileResult[] = [];
  let next = 0;
  console.log(`TAP version 14\n1..${files.length}`);
  await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, async () => {
    while (next < files.length) {
      const result = await runFile(files[next++]!);
      results.push(result);
      report(result, results.length);
    }
  }));
  const sum = (k: 'total' | 'pass' | 'fail' | 'skip') => results.reduce((n, r) => n + r[k], 0);
  const failedFiles = results.filter((r) => !r.ok);
  if (failedFiles.length > 0) console.log(`# failed files:\n${failedFiles.map((r) => `#   ${r.file}`).join('\n')}`);
  console.log(`# { total: ${sum('total')}, pass: ${sum('pass')}${sum('fail') ? `, fail: ${sum('fail')}` : ''}${sum('skip') ? `, skip: ${sum('skip')}` : ''} }`);
  reportCpu(results);
  console.log(`# time=${Date.now() - started}ms`);
  // The one plain line any CI can read.
  console.log(`tests: ${sum('pass')} passed, ${sum('fail')} failed${sum('skip') ? `, ${sum('skip')} skipped` : ''}`);
  process.exitCode = failedFiles.length > 0 ? 1 : 0;
}

function report(r: FileResult, n: number): void {
  const linger = r.lingerMs > lingerNoticeMs ? ` (its process stayed up ${(r.lingerMs / 1000).toFixed(0)} s after its tests ended)` : '';
  console.log(`${r.ok ? 'ok' : 'not ok'} ${n} - ${r.file} # time=${r.ms}ms${linger}`);
  if (!r.ok) console.log(r.output.replace(/^/gm, '    '));
}

// The suite is CPU-bound on two cores, so its wall time follows the CPU its files use.
function reportCpu(results: readonly FileResult[]): void {
  const measured = results.filter((r) => r.cpuS !== undefined).sort((a, b) => b.cpuS! - a.cpuS!);
  if (measured.length === 0) return;
  const all = measured.reduce((n, r) => n + r.cpuS!, 0);
  console.log(`# CPU by file (its process and the children it waited for), ${all.toFixed(0)} s in all; the most:`);
  for (const r of measured.slice(0, cpuListed)) console.log(`#   ${r.cpuS!.toFixed(1).padStart(6)} s  ${r.file}`);
}

/**
 * CPU seconds of this process's children reaped so far (from /proc/self/stat): read
 * as each file's process is reaped, the growth since the last read is that file's. Files that
 * end at the same instant may share one reading; undefined where there is no /proc.
 */
function reapedCpuSeconds(): number | undefined {
  try {
    return procCpuSeconds('/proc/self/stat').reapedChildren;
  } catch {
    return undefined;
  }
}

function runFile(file: string): Promise<FileResult> {
  const started = Date.now();
  // Its own process group: a file cut off, or one that leaves a child behind, takes its children along.
  const child = spawn(process.execPath, ['--enable-source-maps', file], {
    cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TAP_TIMEOUT: String(timeoutS) },
  });
  running.add(child.pid!);
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const limit = setTimeout(() => {
    output += `\n# run-suite: killed after ${hardLimitMs / 60_000} minutes\n`;
    killGroup(child.pid!);
  }, hardLimitMs);
  return new Promise((done) => {
    child.once('error', (err) => { output += `\n# run-suite: ${err.message}\n`; });
    // At its exit, whatever it left running goes too: a stray child would hold the pipes open.
    let cpuS: number | undefined;
    child.once('exit', () => {
      killGroup(child.pid!);
      const reaped = reapedCpuSeconds();
      if (reaped !== undefined && reapedBefore !== undefined) cpuS = reaped - reapedBefore;
      reapedBefore = reaped;
    });
    child.once('close', (code, signal) => {
      clearTimeout(limit);
      running.delete(child.pid!);
      done({ ...resultOf(file, output, code, signal, Date.now() - started), cpuS });
    });
  });
}

function resultOf(file: string, output: string, code: number | null, signal: NodeJS.Signals | null, ms: number): FileResult {
  const summary = [...output.matchAll(/^# \{ total: (\d+)(.*)\}$/gm)].at(-1);
  const count = (k: string) => Number(summary?.[2]?.match(new RegExp(`${k}: (\\d+)`))?.[1] ?? 0);
  const ok = code === 0 && signal === null && summary !== undefined && count('fail') === 0;
  // A file that failed without a failing assertion (it died, or exited non-zero) counts one more
  // failure, so the totals never hide it.
  const extra = ok || count('fail') > 0 ? 0 : 1;
  const total = (summary ? Number(summary[1]) : 0) + extra;
  const fail = count('fail') + extra;
  const end = ok ? '' : `# run-suite: the file ended with ${signal ? `signal ${signal}` : `exit code ${code}`}${summary ? '' : ', before its summary'}\n`;
  const testsMs = Number([...output.matchAll(/^# time=([\d.]+)ms$/gm)].at(-1)?.[1] ?? ms);
  return { file, ok, total, lingerMs: Math.max(0, ms - testsMs), pass: count('pass'), fail, skip: count('skip'), ms, output: output + end };
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.js') ? [relative(root, path)] : [];
  }).sort();
}

function order(list: string[]): string[] {
  const rank = (f: string) => {
    const i = longestFirst.findIndex((name) => f.endsWith(`/${name}.test.js`));
    return i === -1 ? longestFirst.length : i;
  };
  return [...list].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
