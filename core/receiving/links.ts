import type { SecretBox } from '../../storage/files/index.js';

// Download links for received attachments and raw sources. The link is the credential (no
// Authorization header): its token is the target and expiry sealed with the appliance's secret box
// (AES-256-GCM), so it cannot be forged or altered, and it stops working at `expires_at` or as soon
// as the message is deleted.

export const downloadLinkTtlMs = 15 * 60 * 1000;

export type DownloadTarget =
  | { kind: 'raw'; emailId: string }
  | { kind: 'attachment'; emailId: string; attachmentId: string };

interface SealedLink {
  v: 1;
  k: 'r' | 'a';
  e: string;
  a?: string;
  /** Expiry, Unix ms. */
  x: number;
}

export interface DownloadLink {
  token: string;
  expiresAt: Date;
}

export function signDownload(box: SecretBox, target: DownloadTarget, now: Date): DownloadLink {
  const expiresAt = new Date(now.getTime() + downloadLinkTtlMs);
  const payload: SealedLink = target.kind === 'raw'
    ? { v: 1, k: 'r', e: target.emailId, x: expiresAt.getTime() }
    : { v: 1, k: 'a', e: target.emailId, a: target.attachmentId, x: expiresAt.getTime() };
  return { token: box.seal(JSON.stringify(payload)), expiresAt };
}

/** The target of a token that is genuine and not expired; undefined otherwise (the caller answers 404). */
export function openDownload(box: SecretBox, token: string, now: Date): DownloadTarget | undefined {
  let payload: SealedLink;
  try {
    payload = JSON.parse(box.open(token)) as SealedLink;
  } catch {
    return undefined;
  }
  if (payload.v !== 1 || typeof payload.x !== 'number' || payload.x <= now.getTime()) return undefined;
  if (payload.k === 'r') return { kind: 'raw', emailId: payload.e };
  if (payload.k === 'a' && payload.a) return { kind: 'attachment', emailId: payload.e, attachmentId: payload.a };
  return undefined;
}
