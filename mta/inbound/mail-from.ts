import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';

// MAIL FROM: any sender, the null sender included (DSNs come from <>). Whether the sender may use
// its domain (SPF, DMARC) is judged with the content, after DATA (./authenticate).

export function mailFromDecision(_address: SMTPServerAddress, _session: SMTPServerSession, callback: (err?: Error | null) => void): void {
  callback();
}
