import { createReadStream, type ReadStream } from 'node:fs';
import { open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { makePrivateDir, PRIVATE_FILE_MODE } from './private-files.js';

// Uploaded contact import files (CSV), one per import, named by the import's id, under
// <data>/imports/. A file is written once while its upload streams in, fsynced with its folder
// before the import is committed (the worker that reads it may be another process, after a
// crash), read from a byte offset by each step of the import, and deleted seven days after the
// import finished. Owner-only like everything under the data folder.

export interface ImportFileWriter {
  /** Where the upload's bytes go. */
  stream: Writable;
  /** Waits for the stream's end, fsyncs the file and its folder, answers its size. */
  finish(): Promise<number>;
  /** Closes and removes the file (a refused or broken upload leaves nothing). */
  discard(): Promise<void>;
}

export interface ImportFileEntry {
  name: string;
  modifiedMs: number;
}

export interface ImportFiles {
  dir: string;
  /** A new file for an upload; fails if the name exists. */
  create(name: string): Promise<ImportFileWriter>;
  /** The file's bytes from `start`. */
  read(name: string, start: number): ReadStream;
  /** Removes the file; a missing one is fine. */
  remove(name: string): Promise<void>;
  list(): Promise<ImportFileEntry[]>;
}

const fileName = /^[0-9a-f-]{36}\.csv$/;

export function importFiles(dir: string): ImportFiles {
  makePrivateDir(dir);
  const path = (name: string) => join(dir, `${name}.csv`);
  return {
    dir,
    async create(name) {
      const target = path(name);
      const handle = await open(target, 'wx', PRIVATE_FILE_MODE);
      // A plain Writable over the handle: a FileHandle's own write stream keeps a reference that
      // makes close() wait for the stream to close the handle, and then it cannot be fsynced.
      const stream = new Writable({
        highWaterMark: 256 * 1024,
        write(chunk: Buffer, _encoding, done) { handle.write(chunk).then(() => done(), done); },
        writev(chunks, done) { handle.writev(chunks.map((c) => c.chunk as Buffer)).then(() => done(), done); },
      });
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        await handle.close();
      };
      const ended = new Promise<void>((resolve, reject) => {
        stream.once('finish', resolve);
        stream.once('error', reject);
      });
      // Awaited by finish(); a discarded upload's error must not go unhandled.
      ended.catch(() => undefined);
      return {
        stream,
        async finish() {
          await ended;
          await handle.sync();
          const { size } = await handle.stat();
          await close();
          await syncFolder(dir);
          return size;
        },
        async discard() {
          stream.destroy();
          await close().catch(() => undefined);
          await rm(target, { force: true });
        },
      };
    },
    read: (name, start) => createReadStream(path(name), { start, highWaterMark: 256 * 1024 }),
    remove: (name) => rm(path(name), { force: true }),
    async list() {
      const names = (await readdir(dir)).filter((n) => fileName.test(n));
      const entries: ImportFileEntry[] = [];
      for (const n of names) {
        const info = await stat(join(dir, n)).catch(() => undefined);
        if (info) entries.push({ name: n.slice(0, -'.csv'.length), modifiedMs: info.mtimeMs });
      }
      return entries;
    },
  };
}

async function syncFolder(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
