import { createHmac, timingSafeEqual } from 'node:crypto';

// Open and click tokens: what a tracking link carries. A token names the email, the recipient (its
// index in the email) and, for a click, the link: its index in the message and its URL. The URL
// rides inside the token rather than in a table, so a click needs no lookup and each recipient's
// own links (personalised later by broadcasts) work; the MAC is what makes "only a link that was in
// that message redirects" true — only this appliance can bind a URL to an email and recipient.
//
// Layout (then base64url, one spelling only):
//   kind (1: open, 2: click) | email id (16 bytes) | recipient index (uint16) | minted at (uint32,
//   Unix seconds) | click only: link index (uint16) and the URL (UTF-8) | MAC (16 bytes)
// The MAC is the first 128 bits of an HMAC-SHA256 of everything before it under a key derived for
// this purpose alone (secretBox.derive('tracking v1')). `minted at` is when the message was
// composed for this recipient, just before it was handed to the recipient's server: how soon a hit
// follows delivery is what tells a scanner from a reader (./machine.ts).

export type TokenKind = 'open' | 'click';

export interface TrackingClaim {
  kind: TokenKind;
  emailId: string;
  recipientIdx: number;
  /** Unix seconds the message was composed for the recipient. */
  mintedAt: number;
  /** Click tokens only. */
  linkIdx?: number;
  url?: string;
}

const KIND_BYTE: Record<TokenKind, number> = { open: 1, click: 2 };
const HEAD_BYTES = 1 + 16 + 2 + 4;
const MAC_BYTES = 16;
/** Links longer than this stay as they are: a token carries its URL, and a link must stay a usable length. */
export const MAX_TRACKED_URL_BYTES = 2048;

const uuidBytes = (id: string): Buffer => {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error('tracking token: not an email id');
  return Buffer.from(hex, 'hex');
};

const uuidOf = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * The decoder forgives (stray characters skipped, loose trailing bits): a token is honoured only in
 * the one spelling mint writes — base64url characters only, no padding, unused trailing bits zero.
 */
function canonicalBase64url(token: string): boolean {
  if (!/^[A-Za-z0-9_-]+$/.test(token) || token.length % 4 === 1) return false;
  const last = ALPHABET.indexOf(token[token.length - 1]!);
  if (token.length % 4 === 2) return (last & 0x0f) === 0;
  if (token.length % 4 === 3) return (last & 0x03) === 0;
  return true;
}

export interface TrackingTokens {
  mint(claim: TrackingClaim): string;
  /** The claim of a genuine token of `kind`, else undefined (forged, altered, cut, other kind). */
  open(token: string, kind: TokenKind): TrackingClaim | undefined;
}

export function trackingTokens(key: Uint8Array): TrackingTokens {
  if (key.length !== 32) throw new Error('tracking token: the key must be 32 bytes');
  const mac = (body: Buffer) => createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);
  return {
    mint(claim) {
      const head = Buffer.alloc(HEAD_BYTES + (claim.kind === 'click' ? 2 : 0));
      head[0] = KIND_BYTE[claim.kind];
      uuidBytes(claim.emailId).copy(head, 1);
      head.writeUInt16BE(claim.recipientIdx, 17);
      head.writeUInt32BE(claim.mintedAt >>> 0, 19);
      const body = claim.kind === 'click'
        ? (head.writeUInt16BE(claim.linkIdx ?? 0, HEAD_BYTES), Buffer.concat([head, Buffer.from(claim.url ?? '', 'utf8')]))
        : head;
      return Buffer.concat([body, mac(body)]).toString('base64url');
    },
    open(token, kind) {
      if (token.length > 4096 || !canonicalBase64url(token)) return undefined;
      const bytes = Buffer.from(token, 'base64url');
      const min = HEAD_BYTES + MAC_BYTES + (kind === 'click' ? 2 : 0);
      if (bytes.length < min || bytes[0] !== KIND_BYTE[kind]) return undefined;
      if (kind === 'open' && bytes.length !== min) return undefined;
      const body = bytes.subarray(0, bytes.length - MAC_BYTES);
      if (!timingSafeEqual(mac(body), bytes.subarray(bytes.length - MAC_BYTES))) return undefined;
      const claim: TrackingClaim = {
        kind, emailId: uuidOf(body.subarray(1, 17)), recipientIdx: body.readUInt16BE(17), mintedAt: body.readUInt32BE(19),
      };
      if (kind === 'click') {
        claim.linkIdx = body.readUInt16BE(HEAD_BYTES);
        claim.url = body.subarray(HEAD_BYTES + 2).toString('utf8');
      }
      return claim;
    },
  };
}
