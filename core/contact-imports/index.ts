// The contact imports area's public face (audience tier): CSV uploads of contacts, their reads,
// the durable work that processes the rows, and the port to the segments area.
export {
  contactImportsService, IMPORT_FILE_MAX_BYTES, importStatuses,
  type ContactImportsDeps, type ContactImportsService, type ImportFields, type ImportOrigin, type ImportUpload, type ListImportsQuery,
} from './service.js';
export { contactImportWork, CONTACT_IMPORT_WORK, type ImportCursor, type ImportPayload, type ImportWorkDeps } from './work.js';
export { FAILURES_KEPT } from './batch.js';
export { threadedBatchReader, type BatchReader } from './batch-reader.js';
export { type SegmentMembership } from './ports.js';
export type { ContactImportCounts, ContactImportFailure, ContactImportView } from './view.js';
