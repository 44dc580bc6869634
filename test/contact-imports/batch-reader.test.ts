import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { threadedBatchReader, type BatchReader } from '../../core/contact-imports/index.js';
import type { RecordBatch } from '../../core/contact-imports/csv.js';
import { readBatch, type BatchRequest } from '../../core/contact-imports/read-batch.js';
import { importFiles } from '../../storage/files/index.js';
import { withDeadline } from '../helpers/deadline.js';

// The import's records read on their own thread, one batch ahead: the same batches as a read in
// the importing thread, whatever order the steps ask in, and the same refusals.

const dir = mkdtempSync(join(tmpdir(), 'svc-batch-reader-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const files = importFiles(join(dir, 'imports'));

function writeCsv(id: string, rows: number): void {
  const lines = ['email,name,age'];
  // Each row has a quoted newline in a cell.
  for (let i = 1; i <= rows; i++) lines.push(`u${i}@example.com,"Ann\n${i}",${i}`);
  writeFileSync(join(files.dir, `${id}.csv`), '\uFEFF' + lines.join('\r\n') + '\r\n');
}

const ids = { a: '00000000-0000-4000-8000-00000000000a', b: '00000000-0000-4000-8000-00000000000b' };
writeCsv(ids.a, 1000);
writeCsv(ids.b, 300);
const headerBytes = Buffer.byteLength('\uFEFFemail,name,age\r\n');
const start = (importId: string): BatchRequest => ({ importId, offset: headerBytes, maxRows: 128, maxBytes: 1 << 20 });
const next = (request: BatchRequest, batch: RecordBatch): BatchRequest => ({ ...request, offset: batch.nextOffset });
const read = (reader: BatchReader, request: BatchRequest) => withDeadline('a batch from the reader thread', reader.read(request), 10_000);

/** Every batch of the file read in the importing thread. */
async function direct(importId: string): Promise<RecordBatch[]> {
  const batches: RecordBatch[] = [];
  for (let request = start(importId); ;) {
    const batch = await readBatch(files, request);
    batches.push(batch);
    if (batch.ended) return batches;
    request = next(request, batch);
  }
}

t.test('the thread answers the batches a read in the importing thread gives, two imports interleaved', async (t) => {
  const reader = threadedBatchReader(files.dir);
  t.teardown(() => reader.close());
  const expected = { a: await direct(ids.a), b: await direct(ids.b) };
  t.equal(expected.a.length, 8, 'the 1,000 rows take eight batches of 128');
  t.same(expected.a.flatMap((b) => b.records).map((r) => r[1]).slice(-1), ['Ann\n1000'], 'the records in full, to the last');
  const seen: Record<'a' | 'b', RecordBatch[]> = { a: [], b: [] };
  const requests = { a: start(ids.a), b: start(ids.b) };
  while (!seen.a.at(-1)?.ended || !seen.b.at(-1)?.ended) {
    for (const name of ['a', 'b'] as const) {
      if (seen[name].at(-1)?.ended) continue;
      const batch = await read(reader, requests[name]);
      seen[name].push(batch);
      requests[name] = next(requests[name], batch);
    }
  }
  t.same(seen, expected, 'the same rows, row numbers, offsets and ends');
});

t.test('a step that asks again for the batch it had (a failed commit) gets it, not the one read ahead', async (t) => {
  const reader = threadedBatchReader(files.dir);
  t.teardown(() => reader.close());
  const expected = await direct(ids.a);
  const first = await read(reader, start(ids.a));
  t.same(await read(reader, start(ids.a)), first, 'the first batch again');
  t.same(await read(reader, next(start(ids.a), first)), expected[1], 'then the second');
  const third = next(next(start(ids.a), first), expected[1]);
  t.not(third.offset, expected[4]!.nextOffset, 'the third batch is read ahead, not the sixth');
  t.same(await read(reader, { ...third, offset: expected[4]!.nextOffset }), expected[5], 'another owner\'s cursor further on');
});

t.test('after the last batch the thread ends; the next read starts it again', async (t) => {
  const reader = threadedBatchReader(files.dir);
  t.teardown(() => reader.close());
  const all = await direct(ids.b);
  let request = start(ids.b);
  for (const expected of all) {
    const batch = await read(reader, request);
    t.same(batch, expected);
    request = next(request, batch);
  }
  t.same(await read(reader, start(ids.b)), all[0], 'read again from the start');
  await reader.close();
  t.same(await read(reader, start(ids.b)), all[0], 'and after close');
});

t.test('a file that is gone ends the import; one that cannot be read is an error to retry', async (t) => {
  const reader = threadedBatchReader(files.dir);
  t.teardown(() => reader.close());
  const gone = await read(reader, start('00000000-0000-4000-8000-0000000000ff'));
  t.same(gone, { records: [], nextOffset: headerBytes, ended: true, error: 'The uploaded file is no longer there.' });
  const folderId = '00000000-0000-4000-8000-0000000000ee';
  mkdirSync(join(files.dir, `${folderId}.csv`));
  await t.rejects(read(reader, start(folderId)), { name: 'Error', code: 'EISDIR' }, 'a folder where the file should be');
  t.same(await read(reader, start(ids.b)), (await direct(ids.b))[0], 'the thread reads on');
});

t.test('an unclosed quote stops the import at the row it starts, with the parser\'s reason', async (t) => {
  const reader = threadedBatchReader(files.dir);
  t.teardown(() => reader.close());
  const id = '00000000-0000-4000-8000-0000000000cc';
  writeFileSync(join(files.dir, `${id}.csv`), 'email,name,age\r\nz1@example.com,Zed,1\r\nz2@example.com,"Zed,2\r\n');
  const request = { ...start(id), offset: Buffer.byteLength('email,name,age\r\n') };
  const batch = await read(reader, request);
  t.same(batch, await readBatch(files, request), 'as the importing thread reads it');
  t.same(batch.records, [['z1@example.com', 'Zed', '1']], 'the row before it');
  t.ok(batch.ended, 'no batch follows');
  t.match(batch.error, /quote/i, 'the reason names the quote');
});
