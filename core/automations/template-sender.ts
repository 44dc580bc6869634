import type { Caller, SendEmailInput, SendOrigin, StagedSend } from '../emails/index.js';
import { ServiceError, validationError } from '../errors.js';
import type { RecipientLinks } from '../preferences/index.js';
import type { RenderContact, TemplateSends } from '../templates/index.js';
import type { Db } from '../../storage/sql/index.js';
import { contactAudience, type ContactAudience } from './audience.js';
import type { TemplateSender, TemplateSendRequest } from './ports.js';

// A send_email step's template: the team's published version rendered for the run's contact and
// trigger event (variables, `{{{contact.…}}}` and `{{{event.…}}}` slots, repeat groups, show-when
// rules on the contact's fields, properties and the event), its unsubscribe links filled, and sent
// through core/emails like any send (the allowance, suppressions, List-Unsubscribe, email.* events).
// Show-when rules on topics and segments read the contact's membership as it is at the send.

export interface TemplateSenderDeps {
  /** Where the contact's topics and segments are read for show-when rules. */
  db: Db;
  sends: TemplateSends;
  stage(caller: Caller, input: SendEmailInput, origin?: SendOrigin): Promise<StagedSend>;
  linksFor(contact: { id: string; team_id: string; email_key: string }): RecipientLinks;
}

const linkSlot = /\{\{\{\s*(UNSUBSCRIBE_URL|PREFERENCES_URL)\s*(?:\|[^{}]*)?\}\}\}/g;

export function publishedTemplateSender(deps: TemplateSenderDeps): TemplateSender {
  return {
    async exists(teamId, templateId) {
      try {
        await deps.sends.forContacts(teamId, templateId);
        return true;
      } catch (err) {
        if (err instanceof ServiceError && err.statusCode < 500) return false;
        throw err;
      }
    },
    async stage(request: TemplateSendRequest) {
      const renderer = await deps.sends.forContacts(request.teamId, request.templateId);
      const { contact, overrides } = request;
      const audience = await contactAudience(deps.db, request.teamId, contact);
      const rendered = renderer.render({ variables: request.variables, contact: renderContactOf(request, audience), audience: null, event: request.event.data });
      const links = deps.linksFor({ id: contact.id, team_id: request.teamId, email_key: contact.email.toLowerCase() });
      const fill = (text: string) => text.replace(linkSlot, (_m, name: string) => (name === 'UNSUBSCRIBE_URL' ? links.unsubscribeUrl : links.preferencesUrl));
      const from = overrides.from ?? renderer.from;
      const subject = overrides.subject ?? rendered.subject;
      if (!from) throw validationError(422, 'from', `Template ${request.templateId} has no from address and the step gives none.`);
      if (!subject) throw validationError(422, 'subject', `Template ${request.templateId} has no subject and the step gives none.`);
      const staged = await deps.stage({ teamId: request.teamId, apiKeyId: null, domainId: null }, {
        from, to: contact.email, subject, html: fill(rendered.html), text: rendered.text === null ? null : fill(rendered.text),
        reply_to: overrides.reply_to ?? renderer.replyTo, topic_id: overrides.topic_id ?? null, headers: { ...links.headers },
      }, request.origin);
      return { emailId: staged.id, commit: (trx) => staged.commit(trx), accepted: () => staged.accepted() };
    },
  };
}

function renderContactOf(request: TemplateSendRequest, audience: ContactAudience): RenderContact {
  const { contact } = request;
  return {
    email: contact.email, first_name: contact.first_name, last_name: contact.last_name, unsubscribed: contact.unsubscribed,
    created_at: contact.created_at,
    properties: Object.fromEntries(Object.entries(contact.properties).map(([key, typed]) => [key, typed.value as string | number | boolean])),
    topics: audience.topics, segments: audience.segments,
  };
}
