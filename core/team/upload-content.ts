import { imageSize } from 'image-size';
import { missingField, validationError } from '../errors.js';
import { checkSvg, notAnImage } from './svg.js';

// What an uploaded brand kit image is, read from its bytes and never from a name or a declared
// type: image-size reads PNG and JPEG headers (type and pixel size); anything that is markup is
// judged as SVG (core/team/svg.ts). Every refusal is 422 validation_error on `content`.

export const rasterLimitBytes = 256 * 1024;
export const svgLimitBytes = 32 * 1024;
export const maxSidePixels = 4096;

export type UploadType = 'image/png' | 'image/jpeg' | 'image/svg+xml';

export interface CheckedImage {
  contentType: UploadType;
  /** The bytes to store: a raster image as sent, an SVG as the sanitiser's output. */
  bytes: Buffer;
  /** Pixel size of a raster image; null for SVG (it scales). */
  width: number | null;
  height: number | null;
}

const refuse = (message: string) => validationError(422, 'content', message);
const kb = (bytes: number) => `${(bytes / 1024).toLocaleString('en-US', { maximumFractionDigits: 1 })} KB`;

const base64Text = /^[A-Za-z0-9+/]*={0,2}$/;
const dataUrl = /^data:[^,]*;base64,/i;
/** Base64 text of the largest file any type may be, with room for line breaks: longer is refused unread. */
const longestText = Math.ceil(rasterLimitBytes / 3) * 4 * 2;

/** The bytes of `content`: base64, or a base64 `data:` URL (whose declared type is ignored). */
export function decodeContent(content: unknown): Buffer {
  if (content === undefined || content === null || content === '') throw missingField('content');
  if (typeof content !== 'string') throw refuse('`content` must be a base64 string.');
  if (content.length > longestText) throw refuse(`The file is larger than ${kb(rasterLimitBytes)}, the most a PNG or JPEG may be.`);
  const text = content.replace(dataUrl, '').replace(/\s+/g, '');
  if (text.length % 4 === 1 || !base64Text.test(text)) throw refuse('`content` is not valid base64.');
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0) throw missingField('content');
  return bytes;
}

/** The image's type and size from its bytes, checked against the brand kit's limits. */
export async function checkImage(bytes: Buffer): Promise<CheckedImage> {
  const raster = readRaster(bytes);
  if (raster) return checkRaster(bytes, raster);
  if (looksLikeMarkup(bytes)) {
    if (bytes.length > svgLimitBytes) throw refuse(`An SVG may be at most ${kb(svgLimitBytes)} (${svgLimitBytes} bytes); this file is ${bytes.length} bytes.`);
    return { contentType: 'image/svg+xml', bytes: await checkSvg(bytes), width: null, height: null };
  }
  throw refuse(notAnImage);
}

interface RasterHeader {
  type: 'png' | 'jpg';
  width: number | undefined;
  height: number | undefined;
}

/** A PNG or JPEG header as image-size reads it; refuses another image type by name. */
function readRaster(bytes: Buffer): RasterHeader | undefined {
  let size: ReturnType<typeof imageSize>;
  try {
    // A copy in a buffer of its own: image-size reads through a DataView on the whole underlying
    // buffer, and a short file's reads would run on into whatever else Node's pool holds.
    size = imageSize(new Uint8Array(bytes));
  } catch {
    // Not an image image-size can read, or a damaged one: a PNG or JPEG header it cannot
    // read is refused below, whatever else the bytes may be.
    if (bytes.subarray(0, 8).equals(pngSignature) || (bytes[0] === 0xff && bytes[1] === 0xd8)) {
      throw refuse('The file starts like a PNG or JPEG image but its header cannot be read.');
    }
    return undefined;
  }
  const { type, width, height } = size;
  if (type === 'png' || type === 'jpg') return { type, width, height };
  if (type === 'svg') return undefined;
  throw refuse(`${type?.toUpperCase() ?? 'These'} images are not accepted: send a PNG, JPEG or SVG.`);
}

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function checkRaster(bytes: Buffer, { type, width, height }: RasterHeader): CheckedImage {
  const name = type === 'png' ? 'PNG' : 'JPEG';
  if (bytes.length > rasterLimitBytes) throw refuse(`A ${name} may be at most ${kb(rasterLimitBytes)} (${rasterLimitBytes} bytes); this file is ${bytes.length} bytes.`);
  if (!width || !height) throw refuse(`The ${name} image has no pixel size in its header.`);
  if (width > maxSidePixels || height > maxSidePixels) {
    throw refuse(`The ${name} image is ${width}×${height} pixels; each side may be at most ${maxSidePixels}.`);
  }
  return { contentType: type === 'png' ? 'image/png' : 'image/jpeg', bytes, width, height };
}

/** Text whose first character (after a byte order mark and white space) opens a tag. */
function looksLikeMarkup(bytes: Buffer): boolean {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return bytes[i] === 0x3c;
}
