// Row type of the suppression list (migration 004). Kept beside the repo; tables.ts lists it.

export type SuppressionOrigin = 'bounce' | 'complaint' | 'manual' | 'unsubscribe';

export interface SuppressionRow {
  id: string;
  team_id: string;
  /** The address as first given (trimmed). */
  email: string;
  /** The whole address lower-cased: what lookups and the per-team uniqueness compare. */
  email_key: string;
  origin: SuppressionOrigin;
  /** The email that caused it, when one did. */
  source_id: string | null;
  created_at: string;
}
