import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';

// DKIM signing (RFC 6376, rsa-sha256, relaxed/relaxed) with mailauth's canonicalization and our
// own crypto.sign over a key parsed once per domain: mailauth's dkimSign re-parses the PEM for
// every message (library-facts: ~440 signatures/s), a cached KeyObject signs several times
// faster. The same pieces also let us OVERSIGN: h= names From, To, Cc, Subject, Date,
// Message-ID and Reply-To once more than they occur, so a header of those names added in transit
// breaks the signature. Signatures are proven by mailauth's verifier and by dkimpy in the tests.

const require = createRequire(import.meta.url);

interface ParsedHeader { key: string; casedKey: string; line: Buffer }
interface BodyHasher { update(chunk: Buffer | null, final?: boolean): void; digest(encoding: 'base64'): string }

const tools = require('mailauth/lib/tools') as {
  parseHeaders(buf: Buffer): { parsed: ParsedHeader[] };
  getSigningHeaderLines(parsed: ParsedHeader[], fieldNames: string): { keys: string; headers: ParsedHeader[] };
  formatSignatureHeaderLine(type: 'DKIM', values: Record<string, unknown>, folded: boolean): string;
};
const { dkimBody } = require('mailauth/lib/dkim/body') as { dkimBody(canon: string, algo: string, max: number | false): BodyHasher };
const { generateCanonicalizedHeader } = require('mailauth/lib/dkim/header') as {
  generateCanonicalizedHeader(type: 'DKIM', lines: { keys: string; headers: ParsedHeader[] }, options: Record<string, unknown>): { canonicalizedHeader: Buffer; dkimHeaderOpts: Record<string, unknown> };
};

/** Headers signed as they occur. */
const signedFields = [
  'From', 'Sender', 'Reply-To', 'Subject', 'Date', 'Message-ID', 'To', 'Cc', 'MIME-Version', 'Content-Type',
  'Content-Transfer-Encoding', 'Content-ID', 'Content-Description', 'In-Reply-To', 'References', 'List-Id',
  'List-Unsubscribe', 'List-Unsubscribe-Post', 'Feedback-ID', 'X-Svc-Email-Id',
];
/** Headers signed once more than they occur (oversigning). */
export const oversignedFields = ['From', 'To', 'Cc', 'Subject', 'Date', 'Message-ID', 'Reply-To'];

export interface DkimKey {
  domain: string;
  selector: string;
  privateKeyPem: string;
}

export interface DkimSigner {
  /** The message with its DKIM-Signature header in front. */
  sign(message: Buffer, key: DkimKey, at: Date): Buffer;
}

/**
 * A signer that parses each private key once: one parsed key per domain and selector, replaced when
 * the PEM under them changes (a rotation), and at most `capacity` of them (the oldest go first).
 */
export function dkimSigner(capacity = 1000): DkimSigner {
  const keys = new Map<string, { pem: string; parsed: KeyObject }>();
  const keyObject = (key: DkimKey) => {
    const id = `${key.domain}\n${key.selector}`;
    const hit = keys.get(id);
    if (hit && hit.pem === key.privateKeyPem) return hit.parsed;
    const parsed = createPrivateKey({ key: key.privateKeyPem, format: 'pem' });
    keys.delete(id);
    if (keys.size >= capacity) keys.delete(keys.keys().next().value!);
    keys.set(id, { pem: key.privateKeyPem, parsed });
    return parsed;
  };
  return {
    sign(message, key, at) {
      const split = headerEnd(message);
      const headerBlock = message.subarray(0, split);
      const body = message.subarray(split);
      const hasher = dkimBody('relaxed', 'sha256', false);
      hasher.update(body);
      const bodyHash = hasher.digest('base64');
      const { parsed } = tools.parseHeaders(headerBlock);
      const lines = tools.getSigningHeaderLines(parsed, signedFields.join(':'));
      const keysList = [lines.keys, ...oversignedFields].filter(Boolean).join(': ');
      const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', { keys: keysList, headers: lines.headers }, {
        signingDomain: key.domain, selector: key.selector, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed',
        bodyHash, timestamp: Math.floor(at.getTime() / 1000),
      });
      dkimHeaderOpts.b = sign('rsa-sha256', canonicalizedHeader, keyObject(key)).toString('base64');
      const header = tools.formatSignatureHeaderLine('DKIM', dkimHeaderOpts, true);
      return Buffer.concat([Buffer.from(`${header}\r\n`), message]);
    },
  };
}

/** Offset of the body: just after the blank line ending the header block (CRLF or LF). */
function headerEnd(message: Buffer): number {
  const crlf = message.indexOf('\r\n\r\n');
  if (crlf >= 0) return crlf + 4;
  const lf = message.indexOf('\n\n');
  return lf >= 0 ? lf + 2 : message.length;
}
