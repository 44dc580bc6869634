import { ServiceError } from '../errors.js';
import type { TemplateSends } from '../templates/index.js';
import type { PublishedContent, TemplateSource } from './ports.js';

/**
 * A broadcast naming a template sends its published version: rendered once with the variables'
 * fallbacks (the broadcast's own `{{{KEY}}}` merge variables are then filled per recipient). A
 * template with no published version, or one whose variables have no fallback, is no body for the
 * send gate — the gate says so rather than the send failing halfway.
 */
export function publishedTemplates(sends: TemplateSends): TemplateSource {
  return {
    async published(teamId, templateId): Promise<PublishedContent | undefined> {
      try {
        const resolved = await sends.resolve(teamId, { id: templateId, variables: {} });
        return { from: resolved.from, subject: resolved.subject, html: resolved.html, text: resolved.text };
      } catch (err) {
        if (err instanceof ServiceError && err.statusCode < 500) return undefined;
        throw err;
      }
    },
  };
}
