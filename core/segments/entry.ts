import type { Db } from '../../storage/sql/index.js';
import { segmentsRepo, type ContactKey } from '../../storage/repos/index.js';
import { emitEntered, filterContext, parseFilter, segmentsContaining } from './membership.js';

// svc:segment.entered for contact writes (create, PATCH, topic choices): the filter segments the
// contact is in are read before the write and again after it, in the write's transaction, and
// each one it is newly in writes the event. Cost per write: one read of the team's live filter
// segments; when there are any, two small reads (their properties and topics) and one
// membership query per 25 segments, before and again after. A team with no filter segment pays
// the one read.

export interface SegmentEntryWatch {
  /** After the write: emits svc:segment.entered for each segment newly entered; answers their ids. */
  settle(contactId: string, now: Date): Promise<string[]>;
}

/** Before a contact write, in its transaction. `contact` by id, or by address for a create. */
export async function watchSegmentEntry(trx: Db, teamId: string, contact: ContactKey): Promise<SegmentEntryWatch> {
  const rows = await segmentsRepo(trx).liveFiltered(teamId);
  if (rows.length === 0) return { settle: async () => [] };
  const segments = rows.map(parseFilter);
  const before = await segmentsContaining(trx, teamId, contact, segments, await filterContext(trx, teamId, segments));
  return {
    async settle(contactId, now) {
      // Read again: the write may have declared a property a filter names.
      const after = await segmentsContaining(trx, teamId, { id: contactId }, segments, await filterContext(trx, teamId, segments));
      const entered = [...after].filter((id) => !before.has(id)).sort();
      for (const id of entered) await emitEntered(trx, teamId, id, contactId, now);
      return entered;
    },
  };
}
