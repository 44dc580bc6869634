import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';

// Return paths (MAIL FROM), one per recipient's SMTP transaction:
//   bounces+<email id as 32 hex>-<recipient index>-<day><mac>@<return-path host>
// The email id is no secret (every recipient sees it in the Message-ID) and the index counts 0, 1,
// 2…, so the address alone would let anyone who saw one message forge a bounce for another
// recipient of it. The tag is BATV-style: <day> is the UTC day it was minted (4 hex digits, days
// since 1970) and <mac> the first 56 bits of an HMAC-SHA256 over email, index and day under a key
// only this appliance holds. Inbound SMTP checks it at RCPT; a report can then only ever affect the
// recipient it was signed for. The local part stays within 64 octets (62 at most).
//
// Addresses minted before tags existed (no tag) keep working only for mail sent before the upgrade
// and only while that mail's retry window is still open: a late DSN about it can still settle it.

const signedLocal = /^bounces\+([0-9a-f]{32})-(\d{1,3})-([0-9a-f]{4})([0-9a-f]{14})$/i;
const legacyLocal = /^bounces\+([0-9a-f]{32})-(\d{1,3})$/i;
const anyReturnPath = /^bounces\+/i;
const dayMs = 86_400_000;
/** How long a tag is honoured: remote MTAs retry for days, feedback loops report weeks later. */
const tagLifetimeDays = 45;

export interface ReturnPathTarget {
  emailId: string;
  recipientId: string;
}

/** A return-path address: a signed target, or ours in shape but not honoured (and why). */
export type ReturnPathCheck = ({ ok: true } & ReturnPathTarget) | { ok: false; reason: string };

export interface ReturnPathDeps {
  /** 32 secret bytes derived from the appliance's secret key for this purpose alone. */
  key: Buffer;
  /** When tags began on this appliance: unsigned addresses of older mail may still come back. */
  signedSince(): Promise<Date>;
  /** How long a recipient is retried (outbound_queue_lifetime_hours). */
  retryWindowMs: number;
}

export interface ReturnPaths {
  /** The signed return path for one recipient (`<email id>.<index>`) at the domain's return-path host. */
  address(recipientId: string, host: string, now: Date): string;
  /** Undefined for an address that is not a return path at all. */
  check(address: string, now: Date): Promise<ReturnPathCheck | undefined>;
}

export function returnPaths(deps: ReturnPathDeps): ReturnPaths {
  // The key made a KeyObject once: handed the raw bytes, createHmac makes one per call (every attempt).
  const key = createSecretKey(deps.key);
  const mac = (hex: string, index: number, day: string) =>
    createHmac('sha256', key).update(`${hex}.${index}.${day}`).digest('hex').slice(0, 14);
  return {
    address(recipientId, host, now) {
      const { hex, index } = splitRecipientId(recipientId);
      const day = Math.floor(now.getTime() / dayMs).toString(16).padStart(4, '0');
      return `bounces+${hex}-${index}-${day}${mac(hex, index, day)}@${host}`;
    },
    async check(address, now) {
      const local = address.slice(0, Math.max(0, address.lastIndexOf('@')));
      if (!anyReturnPath.test(local)) return undefined;
      const signed = signedLocal.exec(local);
      if (signed) return checkSigned(signed, now);
      const legacy = legacyLocal.exec(local);
      if (legacy) return checkLegacy(legacy, now);
      return { ok: false, reason: 'malformed return path' };
    },
  };

  function checkSigned(match: RegExpExecArray, now: Date): ReturnPathCheck {
    const [, hexRaw, indexRaw, day, given] = match as unknown as [string, string, string, string, string];
    const hex = hexRaw.toLowerCase();
    const index = Number(indexRaw);
    const expected = Buffer.from(mac(hex, index, day.toLowerCase()));
    if (!timingSafeEqual(expected, Buffer.from(given.toLowerCase()))) return { ok: false, reason: 'bad return path signature' };
    const age = Math.floor(now.getTime() / dayMs) - parseInt(day, 16);
    if (age < -1 || age > tagLifetimeDays) return { ok: false, reason: 'expired return path signature' };
    return target(hex, index);
  }

  async function checkLegacy(match: RegExpExecArray, now: Date): Promise<ReturnPathCheck> {
    const hex = match[1]!.toLowerCase();
    // The email id is a UUIDv7: its first 48 bits are the time the email was accepted.
    const sentAt = parseInt(hex.slice(0, 12), 16);
    if (sentAt >= (await deps.signedSince()).getTime()) return { ok: false, reason: 'unsigned return path' };
    if (now.getTime() > sentAt + deps.retryWindowMs) return { ok: false, reason: 'unsigned return path past its retry window' };
    return target(hex, Number(match[2]));
  }
}

function target(hex: string, index: number): ReturnPathCheck {
  const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { ok: true, emailId, recipientId: `${emailId}.${index}` };
}

function splitRecipientId(recipientId: string): { hex: string; index: number } {
  const dot = recipientId.lastIndexOf('.');
  return { hex: recipientId.slice(0, dot).replace(/-/g, '').toLowerCase(), index: Number(recipientId.slice(dot + 1)) };
}
