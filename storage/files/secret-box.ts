import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes, randomFillSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { makePrivateDir, PRIVATE_FILE_MODE } from './private-files.js';

/** Seals secrets (DKIM private keys, provider tokens) before they reach the database. */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
  /** 32 bytes for one purpose (e.g. signing return paths), derived from the key with HKDF. */
  derive(purpose: string): Buffer;
}

const VERSION = 'v1';

/**
 * AES-256-GCM with a 32-byte key kept in a file of its own (created on first start, mode 0600),
 * so a copy of the database alone reveals no private key. Format: v1.<iv>.<tag>.<ciphertext>, a
 * 12-byte IV and the full 16-byte tag; anything else is refused before GCM sees it.
 */
export function openSecretBox(keyPath: string): SecretBox {
  const key = loadOrCreateKey(keyPath);
  // One key object for every seal: given the raw bytes, each cipher would import the key again
  // (a campaign page seals a link token per recipient).
  const cipherKey = createSecretKey(key);
  return {
    seal(plaintext) {
      const iv = freshIv();
      const cipher = createCipheriv('aes-256-gcm', cipherKey, iv, { authTagLength: TAG_BYTES });
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, body, extra] = sealed.split('.');
      if (version !== VERSION || extra !== undefined) throw new Error('secret-box: not a sealed value');
      const ivBytes = decodePart(iv, IV_BYTES);
      const tagBytes = decodePart(tag, TAG_BYTES);
      const bodyBytes = decodePart(body);
      // authTagLength pins the tag size: without it GCM accepts a tag cut to 4 bytes, and a
      // 4-byte tag is forged by trying 2^32 values, no key needed.
      const decipher = createDecipheriv('aes-256-gcm', cipherKey, ivBytes, { authTagLength: TAG_BYTES });
      decipher.setAuthTag(tagBytes);
      return Buffer.concat([decipher.update(bodyBytes), decipher.final()]).toString('utf8');
    },
    derive: (purpose) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `svc ${purpose}`, 32)),
  };
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

// IVs are cut from a pool of random bytes refilled 4 KiB at a time from the same CSPRNG, each
// byte used once: a campaign page seals a token per recipient, and a randomBytes call per seal
// was a tenth of the sealing. Each IV is a copy, so a refill never changes one handed out.
const ivPool = Buffer.alloc(4096);
let ivUsed = ivPool.length;

function freshIv(): Buffer {
  if (ivUsed + IV_BYTES > ivPool.length) {
    randomFillSync(ivPool);
    ivUsed = 0;
  }
  const iv = Buffer.from(ivPool.subarray(ivUsed, ivUsed + IV_BYTES));
  ivUsed += IV_BYTES;
  return iv;
}

/**
 * One base64url part of a sealed value, in the one spelling seal writes: the decoder skips
 * characters outside the alphabet, so a part is re-encoded and compared before it is trusted.
 */
function decodePart(part: string | undefined, bytes?: number): Buffer {
  const decoded = Buffer.from(part ?? '', 'base64url');
  if (part === undefined || decoded.toString('base64url') !== part || (bytes !== undefined && decoded.length !== bytes)) {
    throw new Error('secret-box: not a sealed value');
  }
  return decoded;
}

function loadOrCreateKey(path: string): Buffer {
  if (!existsSync(path)) {
    makePrivateDir(dirname(path));
    // 'wx' fails if another process created it first; then we read theirs.
    try {
      writeFileSync(path, randomBytes(32).toString('base64'), { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`secret-box: ${path} must hold 32 bytes of base64`);
  return key;
}
