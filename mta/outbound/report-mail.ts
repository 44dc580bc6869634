import MimeNode from 'nodemailer/lib/mime-node';
import type { TlsReportMail, TlsReportMailer } from '../../core/tls-reports/index.js';
import { attemptDelivery } from './deliver.js';
import type { Route } from './routes.js';
import type { SessionPool } from './session-pool.js';

// TLS-RPT report mail (RFC 8460 section 5.3) sent by the appliance itself: a multipart/report
// (report-type=tlsrpt) with a short text and the gzipped JSON, composed by nodemailer's MIME
// builder and delivered once through the outbound MTA's own path (route → MX in order → SMTP).
// There is no queue behind it: a failure is answered, and the jobs role tries again next run.

export async function composeReportMail(mail: TlsReportMail, messageId: string, date: Date): Promise<Buffer> {
  const root = new MimeNode('multipart/report; report-type="tlsrpt"');
  root.setHeader({ From: mail.from, To: mail.to, Subject: mail.subject, 'Message-ID': messageId, Date: date.toUTCString(), ...mail.headers });
  root.createChild('text/plain; charset=utf-8').setContent(mail.text);
  root.createChild(mail.attachment.contentType, { filename: mail.attachment.filename })
    .setHeader('Content-Disposition', 'attachment').setContent(mail.attachment.content);
  return root.build();
}

export interface ReportMailerDeps {
  route(domain: string, tls: 'opportunistic' | 'enforced'): Promise<Route>;
  pool: SessionPool;
  /** The appliance's mail host name (Message-ID). */
  hostname: string;
  now(): Date;
}

export function reportMailer(deps: ReportMailerDeps): TlsReportMailer {
  return async (mail) => {
    const domain = mail.to.slice(mail.to.lastIndexOf('@') + 1).toLowerCase();
    const message = await composeReportMail(mail, `<tlsrpt.${crypto.randomUUID()}@${deps.hostname}>`, deps.now());
    const { outcome } = await attemptDelivery(deps.pool, {
      route: await deps.route(domain, 'opportunistic'),
      envelope: { from: mail.from, to: mail.to, envid: `tlsrpt-${domain}` },
      message,
      beforeData: async () => true,
    });
    switch (outcome.kind) {
      case 'delivered': return null;
      case 'deferred': case 'bounced': return outcome.response;
      case 'ambiguous': case 'failed': return outcome.reason;
      case 'suppressed': return 'suppressed';
    }
  };
}
