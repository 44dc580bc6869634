import { engagementRepo, type EmailRow, type LinkClickDelta, type RecipientEngagementDelta } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import { newId } from '../ids.js';

// What a batch of hits adds to each recipient's engagement and, for broadcast emails, to each
// link's clicks — summed in memory first, so the batch's transaction writes one statement per
// recipient and two or three per link and email, never one per hit. Machine hits are counted
// (they are what happened) and counted apart, so a list can leave them out.

export interface EngagementHit {
  kind: 'open' | 'click';
  email: EmailRow;
  recipientId: string;
  url: string | undefined;
  at: Date;
  machine: boolean;
}

export async function recordEngagement(trx: Db, hits: readonly EngagementHit[]): Promise<void> {
  const recipients = new Map<string, RecipientEngagementDelta>();
  const links = new Map<string, LinkClickDelta>();
  for (const hit of hits) {
    const at = hit.at.toISOString();
    let r = recipients.get(hit.recipientId);
    if (!r) {
      recipients.set(hit.recipientId, (r = {
        recipientId: hit.recipientId, opens: 0, machineOpens: 0, clicks: 0, machineClicks: 0,
        firstOpenedAt: null, firstHumanOpenedAt: null, firstClickedAt: null, firstHumanClickedAt: null,
      }));
    }
    if (hit.kind === 'open') {
      r.opens++;
      if (hit.machine) r.machineOpens++;
      r.firstOpenedAt = earlier(r.firstOpenedAt, at);
      if (!hit.machine) r.firstHumanOpenedAt = earlier(r.firstHumanOpenedAt, at);
      continue;
    }
    r.clicks++;
    if (hit.machine) r.machineClicks++;
    r.firstClickedAt = earlier(r.firstClickedAt, at);
    if (!hit.machine) r.firstHumanClickedAt = earlier(r.firstHumanClickedAt, at);
    const broadcastId = hit.email.broadcast_id;
    if (!broadcastId || hit.url === undefined) continue;
    const key = `${hit.email.id} ${hit.url}`;
    let l = links.get(key);
    if (!l) links.set(key, (l = { broadcastId, teamId: hit.email.team_id, emailId: hit.email.id, url: hit.url, clicks: 0, machineClicks: 0, newLinkId: newId() }));
    l.clicks++;
    if (hit.machine) l.machineClicks++;
  }
  const repo = engagementRepo(trx);
  await repo.addRecipientEngagement([...recipients.values()]);
  await repo.addLinkClicks([...links.values()]);
}

const earlier = (a: string | null, b: string): string => (a === null || b < a ? b : a);
