import type { ContactImportFailureRow, ContactImportRow, ContactImportStatus } from '../../storage/repos/index.js';

// The wire shapes of contact imports (spec, Contact import).

export interface ContactImportCounts {
  /** Data rows read so far (the header is not one). */
  total: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
}

export interface ContactImportView {
  object: 'contact_import';
  id: string;
  status: ContactImportStatus;
  created_at: string;
  /** When the import completed or failed; null while it runs. */
  completed_at: string | null;
  counts: ContactImportCounts;
}

/** A failed row: its number (1 is the first row after the header), the address it gave and why. */
export interface ContactImportFailure {
  row_number: number;
  email: string | null;
  reason: string;
}

export const contactImportView = (row: ContactImportRow): ContactImportView => ({
  object: 'contact_import', id: row.id, status: row.status, created_at: row.created_at, completed_at: row.completed_at,
  counts: { total: row.total, created: row.created, updated: row.updated, skipped: row.skipped, failed: row.failed },
});

export const failureView = (row: ContactImportFailureRow): ContactImportFailure => ({ row_number: row.row_number, email: row.email, reason: row.reason });
