import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPairAsync = promisify(generateKeyPair);

export interface GeneratedDkimKey {
  selector: string;
  /** Base64 of the DER SubjectPublicKeyInfo: the record's p= value. */
  publicKey: string;
  /** PKCS#8 PEM; seal it before it is stored. */
  privateKeyPem: string;
}

/**
 * Selectors are `svc` + 10 random hex digits, e.g. `svc3fa9c01b2e`: stable for the key's life,
 * never reused, and a rotation simply publishes a second one beside the first.
 */
export const newSelector = (): string => `svc${randomBytes(5).toString('hex')}`;

/** A 2048-bit RSA key per domain (spec, Domain: DKIM row). Off the event loop (libuv pool). */
export async function generateDkimKey(): Promise<GeneratedDkimKey> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { selector: newSelector(), publicKey: publicKey.toString('base64'), privateKeyPem: privateKey };
}

/** The key record's text: bare `p=…` as the spec asks (v=DKIM1 and k=rsa are the defaults). */
export const dkimRecordText = (publicKey: string): string => `p=${publicKey}`;

// RFC 1035 §3.3: one character-string holds at most 255 octets.
const MAX_STRING = 255;

/**
 * The text as the quoted character-strings to publish, joined by a space: a 2048-bit key does not
 * fit one string, so it is given as two (spec: "published as two quoted strings").
 */
export function quotedStrings(text: string): string {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += MAX_STRING) parts.push(text.slice(i, i + MAX_STRING));
  return parts.map((p) => `"${p}"`).join(' ');
}
