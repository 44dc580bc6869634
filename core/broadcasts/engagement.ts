import type { BroadcastLinkRow } from '../../storage/repos/index.js';
import { invalidParameter } from '../errors.js';

// What the broadcast lists show of the engagement tracking records (storage/repos/engagement.ts):
// the clicks per link, and whether machine hits count.
//
// Machine opens and clicks (privacy proxies, link scanners: core/tracking/machine.ts) count by
// default, as in GET /emails/metrics, so a broadcast's clicked links add up to its `clicked`
// metric; `exclude_machine=true` — the metrics' own parameter — leaves them out: clicks less the
// machines', unique clicks of recipients with a click no machine made, and the opened and clicked
// recipient lists at their first hit no machine made.

export interface ClickedLink {
  /** An opaque cursor for the row (time-ordered: the link's first click). */
  id: string;
  url: string;
  clicks: number;
  unique_clicks: number;
}

export function excludeMachineOf(raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw invalidParameter('exclude_machine', 'The `exclude_machine` parameter must be true or false.');
}

export function clickedLinkOf(row: BroadcastLinkRow, humanOnly: boolean): ClickedLink {
  const clicks = Number(row.clicks);
  return {
    id: row.id, url: row.url,
    clicks: humanOnly ? clicks - Number(row.machine_clicks) : clicks,
    unique_clicks: Number(humanOnly ? row.unique_human_clicks : row.unique_clicks),
  };
}
