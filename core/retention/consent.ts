import type { Db } from '../../storage/sql/index.js';
import { retentionRepo } from '../../storage/repos/index.js';
import type { Clock } from '../clock.js';

// Consent records are kept three years (spec Contact, rule 2) — after erasure too, under the
// address hash — and then deleted. An erasure record goes with the rest: after three years an
// erased address may join the audience from sends again.

/** Three calendar years, as the spec counts them. */
export const CONSENT_RETENTION_YEARS = 3;

const BATCH = 1000;

/** The instant before which consent records are past their three years. */
export function consentCutoff(now: Date): string {
  const cutoff = new Date(now.getTime());
  cutoff.setUTCFullYear(cutoff.getUTCFullYear() - CONSENT_RETENTION_YEARS);
  return cutoff.toISOString();
}

/** Deletes consent records older than three years, a short statement per batch. */
export async function pruneConsentRecords(db: Db, clock: Clock): Promise<{ deleted: number }> {
  const before = consentCutoff(clock.now());
  let deleted = 0;
  for (;;) {
    const n = await retentionRepo(db).deleteConsentBefore(before, BATCH);
    deleted += n;
    if (n < BATCH) return { deleted };
  }
}
