import type { Db } from '../../storage/sql/index.js';

// What an import needs from areas that are not its to write. The segments area answers these
// (`importSegments` in bin/services.ts).

/** Adding imported contacts to segments (`segments` of POST /contacts/imports). */
export interface SegmentMembership {
  /** The ids among `ids` that are not live segments of the team. */
  missing(teamId: string, ids: readonly string[]): Promise<string[]>;
  /** Adds the contacts to the segments, in the caller's transaction (idempotent). */
  add(trx: Db, teamId: string, segmentIds: readonly string[], contactIds: readonly string[], now: Date): Promise<void>;
}
