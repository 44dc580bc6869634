import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { link, mkdir, open, readdir, readFile, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { makePrivateDir, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files.js';

// Raw messages on disk. DATA writes one file and fsyncs it before anything is committed: straight
// at its record's name under received/ when the message is received mail, else under incoming/.
// Every further record that keeps the same source gets its own hard link, so records made from one
// SMTP transaction share the bytes and each delete removes only its own name. A new name is durable
// only once its folder is fsynced too; names made in the same event-loop turn share one folder
// fsync, and received/ folders are per minute (from the UUIDv7 id) so concurrent messages share it.

export interface SpoolWriter {
  /** The spool name of the file being written (under incoming/). */
  readonly key: string;
  /** Bytes written so far. */
  readonly size: number;
  write(chunk: Buffer): Promise<void>;
  /**
   * fsyncs the file's bytes. Its incoming/ name is temporary: the durable names are the links
   * (whose folders link() fsyncs).
   */
  finish(): Promise<void>;
  /** Closes and removes a file that will not be kept. */
  abort(): Promise<void>;
}

export interface Spool {
  readonly dir: string;
  /** A new file: at `key` (a received/ name, made durable by finish()), else a temporary incoming/ name. */
  create(key?: string): Promise<SpoolWriter>;
  /** Gives a finished file a second name (a hard link) and fsyncs that name's folder. */
  link(fromKey: string, toKey: string): Promise<void>;
  /** Removes one name; a name that is already gone is not an error. */
  remove(key: string): Promise<void>;
  read(key: string): Promise<Buffer>;
  stream(key: string): Readable;
  exists(key: string): Promise<boolean>;
  /** Removes incoming/ files older than the age: left by a crash before they were acknowledged. */
  sweepIncoming(olderThanMs: number, now: number): Promise<number>;
}

/**
 * The spool name of a received message's raw source. The folder is the id's first 8 hex digits:
 * the top of its UUIDv7 millisecond timestamp, so a folder holds about one minute of mail.
 */
export const receivedRawKey = (emailId: string): string => `received/${emailId.slice(0, 8)}/${emailId}.eml`;

/**
 * The spool name of a message for the appliance's own postmaster (no team holds it; the operator
 * reads these files): one folder per UTC day.
 */
export const postmasterRawKey = (id: string, receivedAt: Date): string => `postmaster/${receivedAt.toISOString().slice(0, 10)}/${id}.eml`;

export function openSpool(dir: string): Spool {
  makePrivateDir(join(dir, 'incoming'));
  makePrivateDir(join(dir, 'received'));
  const pathOf = (key: string) => {
    if (key.includes('..') || key.startsWith('/')) throw new Error(`spool: bad key ${key}`);
    return join(dir, key);
  };
  const madeDirs = new Set<string>();
  const ensureDir = async (path: string) => {
    if (madeDirs.has(path)) return;
    await mkdir(path, { recursive: true, mode: PRIVATE_DIR_MODE });
    madeDirs.add(path);
  };
  const syncDir = folderSyncer();
  return {
    dir,
    async create(key) {
      const name = key ?? `incoming/${randomUUID()}.eml`;
      const path = pathOf(name);
      if (key) await ensureDir(dirname(path));
      const handle = await open(path, 'wx', PRIVATE_FILE_MODE);
      return writer(name, path, handle, key ? () => syncDir(dirname(path)) : undefined);
    },
    async link(fromKey, toKey) {
      const target = pathOf(toKey);
      await ensureDir(dirname(target));
      await link(pathOf(fromKey), target);
      // A name whose folder could not be made durable (a full disk) is not left behind: the
      // caller stores nothing, so nothing may look stored.
      await syncDir(dirname(target)).catch(async (err: unknown) => {
        await unlink(target).catch(() => undefined);
        throw err;
      });
    },
    async remove(key) {
      try {
        await unlink(pathOf(key));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    },
    read: (key) => readFile(pathOf(key)),
    stream: (key) => createReadStream(pathOf(key)),
    async exists(key) {
      try {
        await stat(pathOf(key));
        return true;
      } catch {
        return false;
      }
    },
    async sweepIncoming(olderThanMs, now) {
      let removed = 0;
      for (const name of await readdir(join(dir, 'incoming'))) {
        const path = join(dir, 'incoming', name);
        const info = await stat(path).catch(() => undefined);
        if (info && now - info.mtimeMs > olderThanMs) {
          await unlink(path).catch(() => undefined);
          removed++;
        }
      }
      return removed;
    },
  };
}

function writer(key: string, path: string, handle: FileHandle, syncName?: () => Promise<void>): SpoolWriter {
  let size = 0;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await handle.close();
  };
  return {
    key,
    get size() {
      return size;
    },
    async write(chunk) {
      let offset = 0;
      while (offset < chunk.length) {
        const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset);
        offset += bytesWritten;
      }
      size += chunk.length;
    },
    async finish() {
      // On failure (ENOSPC, EIO) the caller aborts: the file goes, whatever was written of it.
      await handle.sync();
      await close();
      await syncName?.();
    },
    async abort() {
      await close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
    },
  };
}

/**
 * fsyncs folders, coalesced: callers asking for the same folder before its fsync starts share it.
 * A caller arriving after the fsync started waits for a new one (its entry may be newer).
 */
function folderSyncer(): (path: string) => Promise<void> {
  const pending = new Map<string, Promise<void>>();
  return (path) => {
    const waiting = pending.get(path);
    if (waiting) return waiting;
    const run = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      pending.delete(path);
      const handle = await open(path, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
    pending.set(path, run);
    return run;
  };
}
