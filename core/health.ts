export interface Probe {
  name: string;
  check(): Promise<void>;
}

export interface CheckResult {
  name: string;
  ok: boolean;
  durationMs: number;
  error?: string;
}

export interface Readiness {
  status: 'ok' | 'degraded';
  version: string;
  env: string;
  checks: CheckResult[];
  failed: string[];
}

export interface Liveness {
  status: 'ok';
  version: string;
  env: string;
}

/**
 * The data folder's file system has room: below `minFreeBytes` writes start failing (sends answer
 * 503, SMTP 452), so readiness says `degraded` naming storage. statfs only: cheap enough for /ready.
 */
export function storageProbe(freeBytes: () => Promise<number>, minFreeBytes = 1024 * 1024): Probe {
  return {
    name: 'storage',
    async check() {
      const free = await freeBytes();
      if (free < minFreeBytes) throw new Error(`${free} bytes free in the data folder (needs ${minFreeBytes})`);
    },
  };
}

/** Runs every probe at once, each under the same deadline, so a hung dependency cannot hang /ready. */
export async function checkReadiness(probes: readonly Probe[], identity: { version: string; env: string }, deadlineMs: number): Promise<Readiness> {
  const checks = await Promise.all(probes.map((probe) => runProbe(probe, deadlineMs)));
  const failed = checks.filter((c) => !c.ok).map((c) => c.name);
  return { status: failed.length ? 'degraded' : 'ok', ...identity, checks, failed };
}

async function runProbe(probe: Probe, deadlineMs: number): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${deadlineMs} ms`)), deadlineMs);
  });
  try {
    await Promise.race([probe.check(), deadline]);
    return { name: probe.name, ok: true, durationMs: elapsed(started) };
  } catch (err) {
    return { name: probe.name, ok: false, durationMs: elapsed(started), error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

const elapsed = (started: number) => Math.round((performance.now() - started) * 10) / 10;
