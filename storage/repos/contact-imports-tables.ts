// Row types of the contact import tables (migration 015). Kept beside the repo; tables.ts lists them.

export type ContactImportStatus = 'queued' | 'in_progress' | 'completed' | 'failed';
export type ImportConflictMode = 'upsert' | 'skip';

export interface ContactImportRow {
  id: string;
  team_id: string;
  status: ContactImportStatus;
  created_at: string;
  completed_at: string | null;
  /** Data rows read so far (the header is not one). */
  total: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  on_conflict: ImportConflictMode;
  /** JSON: the column map as resolved against the file's header (core/contact-imports/column-map.ts). */
  column_map: string;
  /** JSON array of segment ids. */
  segments: string;
  /** JSON array of `{id, subscription}`. */
  topics: string;
  /** The file's name as the upload gave it, if it gave one. */
  file_name: string | null;
  file_bytes: number;
  /** Byte offset of the first record after the header: where the first step starts reading. */
  data_offset: number;
  /** Set when the file was deleted (seven days after the import finished); the counts stay. */
  file_deleted_at: string | null;
  /** The API key that uploaded the file, when a key did. */
  created_by: string | null;
  /** The upload request's client address and user agent: the import's consent records carry them. */
  source_ip: string | null;
  source_user_agent: string | null;
  /** Why a failed import stopped (an unreadable file); null otherwise. */
  error: string | null;
}

export interface ContactImportFailureRow {
  import_id: string;
  /** 1 is the first data row after the header. */
  row_number: number;
  /** The address as the row gave it; null when the row had none. */
  email: string | null;
  reason: string;
}
