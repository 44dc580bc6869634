import t from 'tap';
import { parseArf } from '../../mta/bounces/arf.js';
import { parseDsn } from '../../mta/bounces/dsn.js';
import { fixture, values } from '../helpers/received-fixtures.js';

// DSN (RFC 3464) and ARF (RFC 5965) parsing on real-world-shaped samples kept as fixtures
// (test/fixtures/reports/*.eml, with {{…}} placeholders for the addresses a test fills in).

t.test('Postfix: user unknown is a Permanent NoEmail bounce', async (t) => {
  const report = await parseDsn(fixture('postfix-user-unknown.eml'));
  t.match(report, {
    format: 'rfc3464', reportingMta: 'mail.remote.example',
    findings: [{
      recipient: values.RECIPIENT, status: '5.1.1',
      diagnosticCode: /^550 5\.1\.1 <ann@mailbox-provider\.net>: Recipient address rejected: User unknown in virtual mailbox table$/,
      decision: { action: 'bounced', bounce: { type: 'Permanent', subType: 'NoEmail', diagnosticCode: [/^550 5\.1\.1 /] } },
    }],
    original: { messageId: values.MESSAGE_ID, headers: { 'return-path': `<${values.VERP}>`, subject: 'Welcome' } },
  });
});

t.test('Postfix: a delay notice is a delay with its retry deadline', async (t) => {
  const report = await parseDsn(fixture('postfix-delayed.eml'));
  t.match(report?.findings, [{
    status: '4.4.1', diagnosticCode: /^connect to mx\.slow\.example/,
    decision: { action: 'delayed', delay: { type: 'TransientCommunicationFailure', expirationTime: '2026-11-27T08:42:20.000Z', delayedRecipients: [values.RECIPIENT] } },
  }]);
});

t.test('Gmail: over quota is a Transient MailboxFull bounce (no suppression)', async (t) => {
  const report = await parseDsn(fixture('gmail-over-quota.eml'));
  t.match(report, {
    reportingMta: 'googlemail.com',
    findings: [{ status: '5.2.2', decision: { action: 'bounced', bounce: { type: 'Transient', subType: 'MailboxFull' } } }],
    original: { messageId: values.MESSAGE_ID },
  });
  t.match(report!.findings[0]!.diagnosticCode, /^552-5\.2\.2 The email account .* 552 5\.2\.2 Please direct/, 'folded diagnostic read whole');
});

t.test('Exchange Online: recipient not found is a Permanent NoEmail bounce', async (t) => {
  const report = await parseDsn(fixture('exchange-online-not-found.eml'));
  t.match(report?.findings, [{ recipient: values.RECIPIENT, status: '5.1.10', decision: { action: 'bounced', bounce: { type: 'Permanent', subType: 'NoEmail' } } }]);
  t.equal(report?.original?.messageId, values.MESSAGE_ID);
});

t.test('qmail: a plain-text bounce is read from its SMTP reply', async (t) => {
  const report = await parseDsn(fixture('qmail-text-bounce.eml'));
  t.match(report, { format: 'text', findings: [{ recipient: values.RECIPIENT, status: '5.1.1', decision: { action: 'bounced', bounce: { type: 'Permanent', subType: 'NoEmail' } } }] });
});

t.test('an auto-reply to the return path is not a DSN', async (t) => {
  t.equal(await parseDsn(fixture('vacation-auto-reply.eml')), undefined);
});

t.test('ARF: an abuse report with the original message', async (t) => {
  const report = await parseArf(fixture('arf-abuse.eml'));
  t.match(report, {
    feedbackType: 'abuse', userAgent: 'SomeMailboxProvider-FBL/2.1', originalMailFrom: values.VERP, originalRcptTo: values.RECIPIENT,
    sourceIp: '192.0.2.10', original: { messageId: values.MESSAGE_ID, headers: { 'return-path': `<${values.VERP}>` } },
  });
});

t.test('ARF: a redacted report still carries the returned headers', async (t) => {
  const report = await parseArf(fixture('arf-redacted.eml'));
  t.match(report, { feedbackType: 'abuse', originalMailFrom: null, originalRcptTo: null, original: { messageId: values.MESSAGE_ID, headers: { 'return-path': `<${values.VERP}>` } } });
});

t.test('a DSN is not a complaint, a complaint is not a DSN', async (t) => {
  t.equal(await parseArf(fixture('postfix-user-unknown.eml')), undefined);
  t.equal(await parseDsn(fixture('arf-abuse.eml')), undefined);
});
