import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
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
 * so a copy of the database alone reveals no private key. Format: v1.<iv>.<tag>.<ciphertext>.
 */
export function openSecretBox(keyPath: string): SecretBox {
  const key = loadOrCreateKey(keyPath);
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('secret-box: not a sealed value');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
    derive: (purpose) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `svc ${purpose}`, 32)),
  };
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
