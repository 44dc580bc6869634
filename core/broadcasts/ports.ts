import type { Page, PageQuery } from '../../storage/sql/index.js';

// What the broadcasts area is handed rather than imports: later areas or ones built beside it.

/** A published template's content, as a broadcast naming it sends it. */
export interface PublishedContent {
  from: string | null;
  subject: string | null;
  html: string | null;
  text: string | null;
}

/**
 * The templates seam: core/templates answers a team's published template by id or alias (undefined
 * when there is none, or only a draft). Until it is wired, a broadcast naming a template has no body.
 */
export interface TemplateSource {
  published(teamId: string, templateId: string): Promise<PublishedContent | undefined>;
}

export interface ClickedLink {
  /** An opaque cursor for the row. */
  id: string;
  url: string;
  clicks: number;
  unique_clicks: number;
}

/** The tracking seam: click counts per link of a broadcast's emails (empty until tracking exists). */
export interface ClickedLinksSource {
  page(teamId: string, broadcastId: string, page: PageQuery): Promise<Page<ClickedLink>>;
}

export const noTemplates: TemplateSource = { published: async () => undefined };
export const noClicks: ClickedLinksSource = { page: async () => ({ data: [], has_more: false }) };
