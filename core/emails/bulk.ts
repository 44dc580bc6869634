import { hash } from 'node:crypto';
import type { EmailsRepo } from '../../storage/repos/index.js';
import { ServiceError } from '../errors.js';

// Pre-send rule 5: the same message (same subject and bodies) without an unsubscribe link,
// reaching 500 people in a UTC day, warns the team once and blocks nothing; after the warning
// such a send is refused. Per-person content has its own digest, so it is never counted.

export const bulkThreshold = 500;
export const bulkDocsUrl = 'https://svc.invalid/docs/sending/bulk-unsubscribe';

// One-shot digest of the joined text: the same bytes as hashing the parts in turn, without a Hash
// object per email. Only mail without an unsubscribe gets one (accept.ts): no other is counted.
export const contentHash = (subject: string, html: string | null, text: string | null) =>
  hash('sha256', `${subject}\0${html ?? ''}\0${text ?? ''}`, 'hex');

export interface BulkDecision {
  /** Record the warning (once) in the accepting transaction. */
  warn: boolean;
}

export const dayOf = (now: Date) => now.toISOString().slice(0, 10);

export async function checkBulk(repo: EmailsRepo, teamId: string, hash: string, recipients: number, now: Date): Promise<BulkDecision> {
  const day = dayOf(now);
  const already = await repo.bulkRecipients(teamId, hash, `${day}T00:00:00.000Z`);
  if (already + recipients < bulkThreshold) return { warn: false };
  if (already >= bulkThreshold && (await repo.bulkWarned(teamId, hash, day))) {
    throw new ServiceError(422, 'validation_error', `This message has reached ${bulkThreshold} people today without an unsubscribe link. Add an unsubscribe link (or a List-Unsubscribe header), or send it as a broadcast.`, {
      details: { reason: 'bulk_requires_unsubscribe', docs_url: bulkDocsUrl },
    });
  }
  return { warn: true };
}
