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

export const noTemplates: TemplateSource = { published: async () => undefined };
