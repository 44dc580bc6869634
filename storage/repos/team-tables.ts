// Row types of the team's own tables (migration 013). Kept beside the repo; tables.ts lists them.

export type MemberRole = 'admin' | 'member';

export interface TeamMemberRow {
  id: string;
  team_id: string;
  /** As given (trimmed). */
  email: string;
  /** Lower-cased: what the per-team uniqueness compares. */
  email_key: string;
  name: string | null;
  role: MemberRole;
  created_at: string;
}

export interface TeamUsageRow {
  team_id: string;
  /**
   * `d:YYYY-MM-DD` (a UTC day) or `m:YYYY-MM` (a UTC month): emails sent. `p:YYYY-MM`: the month's
   * peak of billable contacts, kept in the same counter column.
   */
  period: string;
  emails: number;
}

export interface BrandKitUploadRow {
  id: string;
  team_id: string;
  content_type: string;
  size: number;
  content: Buffer;
  created_at: string;
}
