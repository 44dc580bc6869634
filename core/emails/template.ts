import { validationError } from '../errors.js';
import type { TemplateSends } from '../templates/index.js';
import type { SendEmailInput } from './types.js';

// A send naming a template: the body comes from its published version rendered with the
// request's variables; the request's `from`, `subject` and `reply_to` win over the template's.
// What is left missing is refused by the ordinary checks (422 missing_required_field).

export interface TemplateUse {
  id: string;
  versionId: string;
}

export async function withTemplate(
  templates: TemplateSends, teamId: string, input: SendEmailInput, draft = false,
): Promise<{ input: SendEmailInput; template: TemplateUse }> {
  const resolved = await templates.resolve(teamId, input.template ?? {}, draft);
  for (const field of ['html', 'text'] as const) {
    if (input[field] !== undefined && input[field] !== null) {
      throw validationError(422, field, `A send with \`template\` takes its body from the template; leave out \`${field}\`.`);
    }
  }
  return {
    input: {
      ...input,
      template: null,
      from: input.from ?? resolved.from ?? undefined,
      subject: input.subject ?? resolved.subject ?? undefined,
      reply_to: input.reply_to ?? resolved.replyTo,
      html: resolved.html,
      text: resolved.text,
    },
    template: { id: resolved.templateId, versionId: resolved.versionId },
  };
}
