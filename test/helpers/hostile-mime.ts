import { createDeflateRaw, createGzip, crc32 } from 'node:zlib';

// Hostile MIME for test/faults/hostile-mime.test.ts: compression bombs made by streaming zeros
// through zlib (the test process never holds the inflated size), deep and wide multiparts, and
// oversized header sections. Every builder answers CRLF text ready for DATA.

const ZERO_CHUNK = Buffer.alloc(4 * 1024 * 1024);

async function compressZeros(stream: NodeJS.ReadWriteStream, bytes: number): Promise<Buffer> {
  const out: Buffer[] = [];
  stream.on('data', (c: Buffer) => out.push(c));
  const done = new Promise<void>((resolve, reject) => { stream.on('end', () => resolve()); stream.on('error', reject); });
  for (let left = bytes; left > 0; left -= ZERO_CHUNK.length) {
    const chunk = left >= ZERO_CHUNK.length ? ZERO_CHUNK : ZERO_CHUNK.subarray(0, left);
    if (!stream.write(chunk)) await new Promise((r) => stream.once('drain', r));
  }
  stream.end();
  await done;
  return Buffer.concat(out);
}

/** A gzip file that inflates to `bytes` zeros. */
export const gzipBomb = (bytes: number) => compressZeros(createGzip({ level: 9 }), bytes);

/** A one-entry zip archive (deflate) whose entry inflates to `bytes` zeros (under 4 GiB). */
export async function zipBomb(name: string, bytes: number): Promise<Buffer> {
  const data = await compressZeros(createDeflateRaw({ level: 9 }), bytes);
  let crc = 0;
  for (let left = bytes; left > 0; left -= ZERO_CHUNK.length) crc = crc32(left >= ZERO_CHUNK.length ? ZERO_CHUNK : ZERO_CHUNK.subarray(0, left), crc);
  const file = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(bytes, 22);
  local.writeUInt16LE(file.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(bytes, 24);
  central.writeUInt16LE(file.length, 28);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + file.length, 12);
  end.writeUInt32LE(local.length + file.length + data.length, 16);
  return Buffer.concat([local, file, data, central, file, end]);
}

const base64Lines = (b: Buffer) => b.toString('base64').replace(/.{76}/g, '$&\r\n');

/** A multipart/mixed message with a short text part and the given attachment parts. */
export function withAttachments(subject: string, parts: { type: string; filename: string; content: Buffer; extraHeaders?: string[] }[]): string {
  const lines = [`From: bomber@far.example`, 'To: desk@mime-inbox.net', `Subject: ${subject}`, 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="bomb"', '',
    '--bomb', 'Content-Type: text/plain; charset=utf-8', '', 'see attached', ''];
  for (const p of parts) {
    lines.push('--bomb', `Content-Type: ${p.type}`, `Content-Disposition: attachment; filename="${p.filename}"`, 'Content-Transfer-Encoding: base64',
      ...(p.extraHeaders ?? []), '', base64Lines(p.content), '');
  }
  lines.push('--bomb--', '');
  return lines.join('\r\n');
}

/** `depth` multiparts nested one inside the next, a text part at the bottom. */
export function nested(subject: string, depth: number): string {
  const head = `From: nester@far.example\r\nTo: desk@mime-inbox.net\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\n`;
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < depth; i++) {
    open.push(`Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n`);
    close.push(`--n${i}--\r\n`);
  }
  return head + open.join('') + 'Content-Type: text/plain\r\n\r\ninner\r\n' + close.reverse().join('');
}

/** `depth` forwarded messages (message/rfc822) each inside the next. */
export function nestedRfc822(subject: string, depth: number): string {
  const levels = Array.from({ length: depth }, (_, i) => `Content-Type: message/rfc822\r\n\r\nFrom: level${i}@far.example\r\nSubject: level ${i}\r\n`);
  return `From: nester@far.example\r\nTo: desk@mime-inbox.net\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\n${levels.join('')}Content-Type: text/plain\r\n\r\ninner\r\n`;
}

/** One multipart/mixed with `count` sibling parts. */
export function wide(subject: string, count: number): string {
  const parts = Array.from({ length: count }, (_, i) => `--w\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="p${i}.bin"\r\n\r\nAAAA\r\n`);
  return `From: wide@far.example\r\nTo: desk@mime-inbox.net\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="w"\r\n\r\n${parts.join('')}--w--\r\n`;
}

/** `count` extra header lines before the body. */
export function manyHeaders(subject: string, count: number): string {
  const extra = Array.from({ length: count }, (_, i) => `X-Flood-${i}: value ${i}`).join('\r\n');
  return `From: headers@far.example\r\nTo: desk@mime-inbox.net\r\nSubject: ${subject}\r\n${extra}\r\n\r\nbody under many headers\r\n`;
}

/** One header field of `bytes` octets, folded into 76-octet lines or left as one line. */
export function hugeHeader(subject: string, bytes: number, folded: boolean): string {
  const value = folded ? Array.from({ length: Math.ceil(bytes / 78) }, () => 'h'.repeat(76)).join('\r\n ') : 'h'.repeat(bytes);
  return `From: header@far.example\r\nTo: desk@mime-inbox.net\r\nSubject: ${subject}\r\nX-Huge: ${value}\r\n\r\nbody under a huge header\r\n`;
}
