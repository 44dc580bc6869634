import type { ImportFiles } from '../../storage/files/index.js';
import { readRecords, type RecordBatch } from './csv.js';

// One step's records of an import: read from a byte offset of its file. A pure read of a file
// written once, so it may run ahead of the step that needs it (batch-reader.ts) and be thrown away.

export interface BatchRequest {
  importId: string;
  /** Byte offset of the first record. */
  offset: number;
  maxRows: number;
  maxBytes: number;
}

/** The records at `request`; a file that is gone ends the import (a read error is thrown for a retry). */
export async function readBatch(files: ImportFiles, request: BatchRequest): Promise<RecordBatch> {
  try {
    return await readRecords(files.read(request.importId, request.offset), request.offset, request.maxRows, request.maxBytes);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return { records: [], nextOffset: request.offset, ended: true, error: 'The uploaded file is no longer there.' };
  }
}
