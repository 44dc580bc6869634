import type { Readable } from 'node:stream';
import { parse, type Options } from 'csv-parse';

// Reading an import's CSV in steps. Each step starts at the byte offset where the last committed
// step stopped and reads records until it has enough; the offset of the next record is the
// parser's `info.bytes` after a record, which counts the record's delimiter (CRLF, LF or CR)
// and a BOM at the start (measured against byte-by-byte feeding, quoted newlines, CRLF and
// blank lines: resuming at that offset yields exactly the records that follow). Nothing holds
// more than one step's records.

/** The longest record read; a longer one (an unclosed quote swallowing the file) stops the import. */
export const MAX_RECORD_BYTES = 1024 * 1024;

function options(atStart: boolean): Options {
  return {
    bom: atStart,
    info: true,
    // Rows shorter or longer than the header are read as they are: a missing cell is empty.
    relax_column_count: true,
    // A quote inside an unquoted cell (`5" screen`) is a character, not an error.
    relax_quotes: true,
    skip_empty_lines: true,
    // Rows of only empty cells (spreadsheets export them at the end) are not rows.
    skip_records_with_empty_values: true,
    max_record_size: MAX_RECORD_BYTES,
  };
}

interface ParsedRecord {
  record: string[];
  info: { bytes: number };
}

export interface RecordBatch {
  records: string[][];
  /** Byte offset where the record after the last one read starts. */
  nextOffset: number;
  /** No record follows. */
  ended: boolean;
  /** The file cannot be read on from nextOffset (the parser's own words). */
  error?: string;
}

/**
 * Up to `maxRecords` records (or about `maxBytes` of them) of `source`, which starts at byte
 * `offset` of the file (0: the file's start, where a BOM is skipped).
 */
export async function readRecords(source: Readable, offset: number, maxRecords: number, maxBytes: number): Promise<RecordBatch> {
  const parser = parse(options(offset === 0));
  source.once('error', (err) => parser.destroy(err));
  source.pipe(parser);
  const records: string[][] = [];
  let nextOffset = offset;
  try {
    for await (const item of parser as AsyncIterable<ParsedRecord>) {
      records.push(item.record);
      nextOffset = offset + item.info.bytes;
      if (records.length >= maxRecords || nextOffset - offset >= maxBytes) return { records, nextOffset, ended: false };
    }
    return { records, nextOffset, ended: true };
  } catch (err) {
    // The parser's refusals end the import; a read error (the disk) is thrown for a retry.
    if (!String((err as { code?: unknown }).code).startsWith('CSV_')) throw err;
    return { records, nextOffset, ended: true, error: (err as Error).message };
  } finally {
    source.unpipe(parser);
    source.destroy();
    parser.destroy();
  }
}

/** The file's first record cannot be parsed. */
export class UnreadableCsv extends Error {}

export interface Header {
  columns: string[];
  /** Byte offset of the first record after the header. */
  dataOffset: number;
}

/** The first record of the file, or undefined when there is none. Throws on an unreadable one. */
export async function readHeader(source: Readable): Promise<Header | undefined> {
  const batch = await readRecords(source, 0, 1, Number.MAX_SAFE_INTEGER);
  if (batch.error !== undefined) throw new UnreadableCsv(batch.error);
  const columns = batch.records[0];
  return columns ? { columns, dataOffset: batch.nextOffset } : undefined;
}
