import type { Db } from '../../storage/sql/index.js';
import type { ContactView } from '../contacts/index.js';
import type { SendOrigin } from '../emails/index.js';

// What the automations area is handed: the template send a send_email step makes. The content
// tier's templates render published versions; until they are wired, bin/services.ts hands in
// `plainTemplateSender` (plain-template-sender.ts), which sends through the same core/emails path.

export interface TemplateSendRequest {
  teamId: string;
  templateId: string;
  /** The step's variables, `{ var }` references already read from the contact and the event. */
  variables: Record<string, unknown>;
  contact: ContactView;
  event: { name: string; data: Record<string, unknown> };
  /** The step's own from, subject, reply_to and topic_id, where it sets them. */
  overrides: { from?: string; subject?: string; reply_to?: string; topic_id?: string };
  /** One per run and step: the send a retried step would make again is this one. */
  idempotencyKey: string;
  /** The run making the send, kept on the email (its svc:email.* events name it; enrol.ts reads the chain). */
  origin: SendOrigin;
}

/** A send checked and prepared outside the step's transaction; its rows commit inside it. */
export interface StagedTemplateSend {
  emailId: string;
  commit(trx: Db): Promise<void>;
  /** After the commit: wake the outbound queue. */
  accepted(): void;
}

export interface TemplateSender {
  /** A published template of the team (what a send_email step may name). */
  exists(teamId: string, templateId: string): Promise<boolean>;
  /** Refusals are ServiceErrors (quota, unverified from domain, no published version…): the run fails with them. */
  stage(request: TemplateSendRequest): Promise<StagedTemplateSend>;
}
