import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../../storage/files/index.js';

// The token of a contact's unsubscribe and preference links: the team, the contact and a keyed
// tag of its address, sealed with the appliance's secret box (AES-256-GCM, the sealing every
// signed link uses), so it cannot be forged or altered and reveals nothing to its reader.
//
// It carries no expiry. The link is in mail people read, archive and search years later, and an
// unsubscribe that stops working is an unsubscribe that fails (and a spam complaint instead):
// the link lives as long as the contact does at that address. It dies when the contact is erased
// (no row) and when its address changes (the tag no longer matches: the link was sent to the old
// mailbox, whose reader is no longer the contact). Replacing `secret.key` ends every link.
//
// One token serves both paths: the unsubscribe page links to the preference page, and the
// preference page can unsubscribe, so a second token would grant nothing the first does not.
//
// Plaintext: `c1.` + base64url(team id 16 bytes ‖ contact id 16 bytes ‖ tag 8 bytes), compact on
// purpose (about 120 characters sealed): it rides in every message's List-Unsubscribe header.
// A broadcast's messages carry `c2.`, the same followed by the broadcast's id (16 bytes), so an
// unsubscribe is recorded against the broadcast it came from (GET /broadcasts/{id}/recipients?
// type=unsubscribed); it grants nothing more than c1.

export interface ContactLinkClaim {
  teamId: string;
  contactId: string;
  /** The broadcast whose message carried the link (c2 tokens). */
  broadcastId?: string;
}

export interface ContactLinkTokens {
  mint(teamId: string, contactId: string, emailKey: string, broadcastId?: string): string;
  /** The claim of a genuine token; undefined for anything else (the caller answers 404). */
  open(token: string): (ContactLinkClaim & { tagMatches(emailKey: string): boolean }) | undefined;
}

const PREFIX = 'c1.';
const BROADCAST_PREFIX = 'c2.';
const TAG_BYTES = 8;
const uuidHex = /^[0-9a-f]{32}$/;

export function contactLinkTokens(box: SecretBox): ContactLinkTokens {
  const key = createSecretKey(box.derive('contact links v1'));
  const tag = (emailKey: string) => createHmac('sha256', key).update(emailKey, 'utf8').digest().subarray(0, TAG_BYTES);
  return {
    mint(teamId, contactId, emailKey, broadcastId) {
      const parts = [sharedIdBytes(teamId), uuidBytes(contactId), tag(emailKey)];
      if (broadcastId !== undefined) parts.push(sharedIdBytes(broadcastId));
      return box.seal((broadcastId === undefined ? PREFIX : BROADCAST_PREFIX) + Buffer.concat(parts).toString('base64url'));
    },
    open(token) {
      const packed = unsealed(box, token);
      if (!packed) return undefined;
      const expected = packed.subarray(32, 32 + TAG_BYTES);
      return {
        teamId: uuidText(packed.subarray(0, 16)),
        contactId: uuidText(packed.subarray(16, 32)),
        ...(packed.length > 32 + TAG_BYTES ? { broadcastId: uuidText(packed.subarray(32 + TAG_BYTES)) } : {}),
        tagMatches: (emailKey) => timingSafeEqual(tag(emailKey), expected),
      };
    },
  };
}

function unsealed(box: SecretBox, token: string): Buffer | undefined {
  // A real token is about 120 characters; anything far longer is not one (and is not decrypted).
  if (token.length > 400) return undefined;
  let plain: string;
  try {
    plain = box.open(token);
  } catch {
    return undefined;
  }
  const length = plain.startsWith(PREFIX) ? 32 + TAG_BYTES : plain.startsWith(BROADCAST_PREFIX) ? 48 + TAG_BYTES : 0;
  if (length === 0) return undefined;
  const packed = Buffer.from(plain.slice(PREFIX.length), 'base64url');
  return packed.length === length ? packed : undefined;
}

// A campaign page mints a token per recipient with the same team and broadcast: their bytes are
// read once and kept (a few ids at a time; Buffer.concat copies them, so they are never shared).
const idBytesKept = new Map<string, Buffer>();

function sharedIdBytes(id: string): Buffer {
  let bytes = idBytesKept.get(id);
  if (!bytes) {
    if (idBytesKept.size >= 64) idBytesKept.clear();
    bytes = uuidBytes(id);
    idBytesKept.set(id, bytes);
  }
  return bytes;
}

function uuidBytes(id: string): Buffer {
  const hex = id.replaceAll('-', '').toLowerCase();
  if (!uuidHex.test(hex)) throw new Error(`contact links: ${id} is not a UUID`);
  return Buffer.from(hex, 'hex');
}

function uuidText(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
