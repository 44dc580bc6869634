import type { SecretBox } from '../../storage/files/index.js';

// Signed download links of sent attachments: the link is the credential (no Authorization), its
// token is the email, the attachment and the expiry sealed with the appliance's secret box
// (AES-256-GCM), so it cannot be forged or altered, and it stops working after 15 minutes.

export const sentDownloadTtlMs = 15 * 60 * 1000;

interface Sealed {
  v: 1;
  k: 's';
  e: string;
  a: string;
  x: number;
}

export function signSentDownload(box: SecretBox, emailId: string, attachmentId: string, now: Date): { token: string; expiresAt: Date } {
  const expiresAt = new Date(now.getTime() + sentDownloadTtlMs);
  const payload: Sealed = { v: 1, k: 's', e: emailId, a: attachmentId, x: expiresAt.getTime() };
  return { token: box.seal(JSON.stringify(payload)), expiresAt };
}

export function openSentDownload(box: SecretBox, token: string, now: Date): { emailId: string; attachmentId: string } | undefined {
  try {
    const p = JSON.parse(box.open(token)) as Sealed;
    if (p.v !== 1 || p.k !== 's' || typeof p.x !== 'number' || p.x <= now.getTime()) return undefined;
    return { emailId: p.e, attachmentId: p.a };
  } catch {
    return undefined;
  }
}

export const sentDownloadPath = (token: string) => `/downloads/sent/${token}`;
export const sharePath = (token: string) => `/share/emails/${token}`;
