// Where a process's memory is at its peak. Loaded into a process with `--import`
// (e.g. BENCH_API_NODE_OPTIONS="--import $PWD/dist/bench/memory-probe.js" for send-throughput's API
// process, or `node --import ./dist/bench/memory-probe.js dist/bench/inbound-throughput.js`), it
// reads /proc/self/status every 100 ms and, at each new RSS high, records process.memoryUsage() and
// V8's heap spaces (physical/used MiB) into MEMPROBE_FILE.<pid>.<thread> (/tmp/memory-probe.… by
// default): one file per thread, since worker threads load it too and each has its own V8 heap.
import { readFileSync, writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';

const out = `${process.env.MEMPROBE_FILE ?? '/tmp/memory-probe'}.${process.pid}.${threadId}`;
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
const statusMib = (status: string, key: string) => Math.round(Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024);
let peak: Record<string, unknown> = { rss: 0 };

const sample = setInterval(() => {
  const status = readFileSync('/proc/self/status', 'utf8');
  const rss = statusMib(status, 'VmRSS');
  if (rss <= (peak.rss as number)) return;
  const usage = process.memoryUsage();
  const spaces = Object.fromEntries(getHeapSpaceStatistics().filter((s) => s.physical_space_size >= 2 ** 20)
    .map((s) => [s.space_name, `${mib(s.physical_space_size)}/${mib(s.space_used_size)}`]));
  peak = {
    rss, anon: statusMib(status, 'RssAnon'), file: statusMib(status, 'RssFile'), heapPhysical: mib(getHeapStatistics().total_physical_size),
    heapUsed: mib(usage.heapUsed), external: mib(usage.external), arrayBuffers: mib(usage.arrayBuffers), spaces,
  };
  writeFileSync(out, `${process.argv.slice(1).join(' ')}\npeak: ${JSON.stringify(peak)}\n`);
}, 100);
sample.unref();
