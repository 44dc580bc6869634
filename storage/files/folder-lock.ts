import { randomUUID } from 'node:crypto';
import { linkSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withExclusiveFileLock } from './exclusive-lock.js';
import { makePrivateDir, PRIVATE_FILE_MODE } from './private-files.js';

// Locks on the data folder: one file per lock under <data_dir>/locks/, naming the process that
// holds it. A lock is a name — a role (`api`), one outbound region (`outbound-us-east-1`), the
// private Redis (`redis`) — so the systemd units, which run the roles as separate processes on one
// folder, each hold their own, while a second copy of any of them is refused.
//
// Why a PID file and not flock(2): node's fs has no flock, and no package that binds it is
// installed (a native addon the carried runtime would have to build). So the file is created
// whole and exclusively — written aside, then link(2)ed into place, which fails with EEXIST as
// open(O_CREAT|O_EXCL) does and never shows a half-written file — and a lock whose process is gone
// is taken over, under a guard the kernel does release (withTakeoverGuard). "Gone" is checked by
// pid and by the process's start time in /proc, so a pid the kernel gave to another process since
// (after kill -9, or a reboot) does not keep the lock.

/** What a lock file says about the process holding it. */
export interface LockHolder {
  name: string;
  pid: number;
  /** Start time of the process in clock ticks since boot (field 22 of /proc/<pid>/stat); null where /proc is not readable. */
  start_ticks: number | null;
  started_at: string;
  /** Every role the holding process runs, and the regions its outbound role serves. */
  roles: string[];
  regions: string[];
  version: string;
  /** Tells this process's lock from another's with the same pid (two appliances in one test process). */
  token: string;
}

export interface LockOwner {
  roles: readonly string[];
  regions: readonly string[];
  version: string;
}

/** Another live process holds one of the locks asked for. */
export class FolderInUseError extends Error {
  constructor(readonly dataDir: string, readonly holder: LockHolder) {
    super(`${dataDir} is in use: pid ${holder.pid} holds its ${holder.name} lock`);
  }
}

export interface FolderLock {
  release(): void;
  /** Tells this process's locks from any other's (also in its lock files). */
  token: string;
  /** Holders of the locks taken that were gone when taken over: processes of this folder that died (kill -9, a crash). */
  replaced: LockHolder[];
}

/** The takeover guard's file, beside the locks; it stays (exclusive-lock.ts). */
export const TAKEOVER_GUARD = 'takeover.guard';
/** A guard holder keeps it for a few system calls; a wait this long means something is wrong. */
const GUARD_WAIT_MS = 10_000;
const lockDir = (dataDir: string) => join(dataDir, 'locks');
const lockPath = (dataDir: string, name: string) => join(lockDir(dataDir), `${name}.lock`);

/**
 * Takes every named lock, or none: the first one held by a live process throws FolderInUseError.
 * A list of names is one lock of several places (the outbound processes a region may have on one
 * folder): the first free place is taken, and only when every place is held does it throw.
 */
export function lockDataFolder(dataDir: string, names: readonly (string | readonly string[])[], owner: LockOwner): FolderLock {
  makePrivateDir(lockDir(dataDir));
  const mine = {
    pid: process.pid, start_ticks: startTicks(process.pid), started_at: new Date().toISOString(),
    roles: [...owner.roles], regions: [...owner.regions], version: owner.version, token: randomUUID(),
  };
  const taken: string[] = [];
  const replaced: LockHolder[] = [];
  const release = () => {
    for (const name of taken.splice(0)) releaseOne(lockPath(dataDir, name), mine.token);
  };
  try {
    for (const places of [...new Map(names.map((n) => [String(n), typeof n === 'string' ? [n] : n])).values()]) {
      const { name, stale } = takeFirstFree(dataDir, mine, places);
      if (stale) replaced.push(stale);
      taken.push(name);
    }
  } catch (err) {
    release();
    throw err;
  }
  return { release, token: mine.token, replaced };
}

/** The live holders of the folder's locks (each process may hold several), by lock name. */
export function lockHolders(dataDir: string): LockHolder[] {
  let files: string[];
  try {
    files = readdirSync(lockDir(dataDir)).filter((f) => f.endsWith('.lock'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return files.sort().map((f) => readHolder(join(lockDir(dataDir), f))).filter((h): h is LockHolder => h !== undefined && isAlive(h));
}

/** The first of these places free (or held by a gone process); FolderInUseError naming the last holder when all are held. */
function takeFirstFree(dataDir: string, mine: Omit<LockHolder, 'name'>, places: readonly string[]): { name: string; stale?: LockHolder } {
  for (const [i, name] of places.entries()) {
    try {
      return { name, stale: takeOne(dataDir, { name, ...mine }) };
    } catch (err) {
      if (!(err instanceof FolderInUseError) || i === places.length - 1) throw err;
    }
  }
  throw new Error('a lock needs at least one place');
}

/** Takes one lock; answers the gone holder whose lock it took over, if any. */
function takeOne(dataDir: string, holder: LockHolder): LockHolder | undefined {
  const path = lockPath(dataDir, holder.name);
  if (linkInto(path, holder)) return undefined;
  // A live holder is refused at once; only a lock that looks stale waits for the guard.
  refuseIfLive(dataDir, path);
  return withTakeoverGuard(dataDir, () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = refuseIfLive(dataDir, path);
      removeIfThere(path);
      if (linkInto(path, holder)) return current;
    }
    throw new Error(`could not take ${path}: other processes keep racing for it`);
  });
}

/** The holder a lock file names when it is gone (or the file unreadable); FolderInUseError when it lives. */
function refuseIfLive(dataDir: string, path: string): LockHolder | undefined {
  const current = readHolder(path);
  if (current && isAlive(current)) throw new FolderInUseError(dataDir, current);
  return current;
}

/** Links a whole lock file into place; false when one is there already. */
function linkInto(path: string, holder: LockHolder): boolean {
  const aside = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(aside, `${JSON.stringify(holder)}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  try {
    linkSync(aside, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  } finally {
    unlinkSync(aside);
  }
}

/**
 * Runs a takeover while holding the folder's takeover guard, an exclusive lock the kernel drops
 * when its holder dies (exclusive-lock.ts), so the guard itself never goes stale.
 * Only a guard holder deletes another process's lock file, so the file it read as stale is the
 * file it deletes: a live holder never replaces a file (link fails on one) and a gone one cannot
 * release. Without the guard, two processes taking over one stale lock could each delete what
 * the other had just linked, and both think they held it. A fresh take needs no guard: link(2)
 * alone decides it.
 */
function withTakeoverGuard<T>(dataDir: string, takeover: () => T): T {
  return withExclusiveFileLock(join(lockDir(dataDir), TAKEOVER_GUARD), GUARD_WAIT_MS, takeover);
}

function removeIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function releaseOne(path: string, token: string): void {
  if (readHolder(path)?.token !== token) return;
  try { unlinkSync(path); } catch { /* already gone */ }
}

/** The holder a lock file names; undefined when it is gone or unreadable (a file from a crash mid-write is never linked in). */
function readHolder(path: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
    return Number.isSafeInteger(parsed.pid) && parsed.pid > 0 ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(holder: LockHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    // EPERM: the pid exists but belongs to someone else; the start time below decides.
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const ticks = startTicks(holder.pid);
  return ticks === null || holder.start_ticks === null || ticks === holder.start_ticks;
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
function startTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isSafeInteger(ticks) ? ticks : null;
  } catch {
    return null;
  }
}
