import { crc32, deflateSync } from 'node:zlib';

// Tiny real images made from their bytes, for the upload tests: a PNG (truecolour, black) and a
// baseline JPEG (one grey channel, every 8×8 block flat grey: one DC and one EOB code per block).

function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG of `width`×`height`; `totalBytes` pads it to exactly that size with a tEXt comment. */
export function png(width: number, height: number, options: { totalBytes?: number } = {}): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  const rows = Buffer.alloc((1 + width * 3) * height); // filter byte 0, black pixels
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const parts = [signature, pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(rows)), pngChunk('IEND', Buffer.alloc(0))];
  const size = parts.reduce((n, p) => n + p.length, 0);
  if (options.totalBytes !== undefined) {
    const keyword = Buffer.from('Comment\0', 'latin1');
    const fill = options.totalBytes - size - 12 - keyword.length;
    if (fill < 0) throw new Error(`a ${width}×${height} PNG is already ${size} bytes`);
    parts.splice(2, 0, pngChunk('tEXt', Buffer.concat([keyword, Buffer.alloc(fill, 'x')])));
  }
  return Buffer.concat(parts);
}

const segment = (marker: number, data: number[]) => Buffer.from([0xff, marker, (data.length + 2) >> 8, (data.length + 2) & 0xff, ...data]);

/** A baseline JPEG of `width`×`height`, flat grey. */
export function jpeg(width: number, height: number): Buffer {
  const oneCode = (tableClass: number) => [tableClass, 1, ...new Array(15).fill(0), 0]; // one code of length 1, symbol 0
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const scan = Buffer.alloc(Math.ceil((2 * blocks) / 8)); // per block: DC difference 0, then end of block
  const usedBits = (2 * blocks) % 8;
  if (usedBits) scan[scan.length - 1] = 0xff >> usedBits; // padded with ones
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xdb, [0, ...new Array(64).fill(1)]),
    segment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]),
    segment(0xc4, oneCode(0x00)),
    segment(0xc4, oneCode(0x10)),
    segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    scan,
    Buffer.from([0xff, 0xd9]),
  ]);
}
