import type { Caller, SendOrigin, StagedSend } from '../emails/index.js';
import type { SendEmailInput } from '../emails/index.js';
import { validationError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import type { RecipientLinks } from '../preferences/index.js';
import type { TemplateSender, TemplateSendRequest } from './ports.js';

// A stand-in for the content tier's templates until they are wired (bin/services.ts): every
// well-formed template id counts as published, and the message is plain text naming the template,
// its variables and the event — sent through core/emails like any send (the allowance,
// suppressions, the contact's List-Unsubscribe headers, email.* events). The step must give
// `from` (a template will carry its own).

export interface PlainTemplateSenderDeps {
  stage(caller: Caller, input: SendEmailInput, origin?: SendOrigin): Promise<StagedSend>;
  linksFor(contact: { id: string; team_id: string; email_key: string }): RecipientLinks;
}

export function plainTemplateSender(deps: PlainTemplateSenderDeps): TemplateSender {
  return {
    exists: async (_teamId, templateId) => looksLikeId(templateId),
    async stage(request: TemplateSendRequest) {
      const { contact, overrides } = request;
      if (overrides.from === undefined) throw validationError(422, 'from', 'A send_email step needs `from` until templates carry their own.');
      const links = deps.linksFor({ id: contact.id, team_id: request.teamId, email_key: contact.email.toLowerCase() });
      const lines = [
        `Template ${request.templateId}`,
        ...Object.entries(request.variables).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`),
        `Event: ${request.event.name}`,
        '',
        `Unsubscribe: ${links.unsubscribeUrl}`,
      ];
      const staged = await deps.stage({ teamId: request.teamId, apiKeyId: null, domainId: null }, {
        from: overrides.from, to: contact.email, subject: overrides.subject ?? `Template ${request.templateId}`, text: lines.join('\n'),
        reply_to: overrides.reply_to ?? null, topic_id: overrides.topic_id ?? null, headers: { ...links.headers },
      }, request.origin);
      return { emailId: staged.id, commit: (trx) => staged.commit(trx), accepted: () => staged.accepted() };
    },
  };
}
