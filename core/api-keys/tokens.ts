import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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
  const given = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

// The secret is 256 random bits, so a plain SHA-256 is enough: there is nothing to brute-force.
function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
