import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { EmailsService } from '../../core/emails/index.js';
import type { Logger } from '../../core/logger.js';
import { principalOf } from './envelope.js';
import { submittedMessage } from './message.js';
import { replyForRefusal, smtpReply, temporaryFailure, type SmtpReplyError } from './replies.js';

// The end of DATA: the message read whole (bounded by SIZE), turned into the send request
// (./message) and handed to the very send `POST /emails` calls — validation, pre-send rules,
// suppressions, the team's allowance spent in the accepting transaction, idempotency, events.
// 250 only once that transaction has committed, naming the email's id.

export interface DataDeps {
  emails: Pick<EmailsService, 'send'>;
  maxMessageBytes: number;
  logger: Logger;
}

type Callback = (err?: Error | null, message?: string) => void;

export function dataDecision(deps: DataDeps) {
  return (stream: SMTPServerDataStream, session: SMTPServerSession, callback: Callback): void => {
    readWhole(stream).then((raw) => {
      if (stream.sizeExceeded) throw smtpReply(552, `5.3.4 Message too big: at most ${deps.maxMessageBytes} bytes`);
      return accept(deps, raw, session);
    }).then((reply) => callback(null, reply), (err: Error) => callback(asReply(deps, session, err)));
  };
}

async function accept(deps: DataDeps, raw: Buffer, session: SMTPServerSession): Promise<string> {
  const principal = principalOf(session);
  const recipients = session.envelope.rcptTo.map((r) => r.address);
  const { input, idempotencyKey } = await submittedMessage(raw, recipients);
  const caller = { teamId: principal.teamId, apiKeyId: principal.apiKeyId, domainId: principal.domainId };
  const answer = await deps.emails.send(caller, input, idempotencyKey);
  deps.logger.info({
    session: session.id, teamId: principal.teamId, emailId: answer.body.id, recipients: recipients.length, replayed: answer.replayed,
  }, 'submission accepted');
  return `2.0.0 Ok: queued as ${answer.body.id}`;
}

function readWhole(stream: SMTPServerDataStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // Past SIZE smtp-server sets `sizeExceeded`; what follows is read and dropped, never kept.
    stream.on('data', (chunk: Buffer) => { if (!stream.sizeExceeded) chunks.push(chunk); });
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

function asReply(deps: DataDeps, session: SMTPServerSession, err: Error): SmtpReplyError {
  const reply = (err as Partial<SmtpReplyError>).responseCode ? (err as SmtpReplyError) : replyForRefusal(err);
  if (reply) {
    const teamId = principalOf(session).teamId;
    deps.logger.info({ session: session.id, teamId, code: reply.responseCode, reply: reply.message }, 'submission refused');
    return reply;
  }
  deps.logger.error({ session: session.id, err: err.message }, 'submission could not be accepted: answered 451');
  return temporaryFailure();
}
