import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

// Layout: svc_<public id>_<secret>. The public id finds the row; only a hash of the secret is
// stored, and it is compared in constant time.
const PREFIX = 'svc_';
const tokenShape = /^svc_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface IssuedToken {
  token: string;
  publicId: string;
  hash: string;
}

export function issueToken(): IssuedToken {
  const publicId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { token: `${PREFIX}${publicId}_${secret}`, publicId, hash: hashSecret(secret) };
}

export interface ParsedToken {
  publicId: string;
  secret: string;
}

export function parseToken(token: string): ParsedToken | undefined {
  const match = tokenShape.exec(token);
  return match ? { publicId: match[1]!, secret: match[2]! } : undefined;
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const stored = storedDigest(storedHash);
  const given = hash('sha256', secret, 'buffer');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

// Every authenticated request compares against its key's stored hash; decoding that hex each
// time cost as much as hashing the secret. Hashes are not secrets, and the map is bounded.
const storedDigests = new Map<string, Buffer>();

function storedDigest(storedHash: string): Buffer {
  let digest = storedDigests.get(storedHash);
  if (!digest) {
    digest = Buffer.from(storedHash, 'hex');
    if (storedDigests.size >= 10_000) storedDigests.clear();
    storedDigests.set(storedHash, digest);
  }
  return digest;
}

// The secret is 256 random bits, so a plain SHA-256 is enough: there is nothing to brute-force.
// One-shot hash(): no Hash object per call.
function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}
