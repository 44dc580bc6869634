import t from 'tap';
import { classifyReply, parseReply, replyRules } from '../../mta/bounces/rules.js';

t.test('every rule\'s sample reply is decided by that rule', async (t) => {
  const names = new Set<string>();
  for (const rule of replyRules) {
    t.notOk(names.has(rule.name), `${rule.name} is named once`);
    names.add(rule.name);
    const c = classifyReply(rule.sample);
    t.equal(c.rule, rule.name, `${rule.name}: ${rule.sample}`);
    t.equal(c.outcome, rule.outcome, rule.name);
    if (rule.outcome === 'bounced') t.ok(c.bounceType && c.subType, `${rule.name} names a bounce type and subtype`);
    if (rule.outcome === 'deferred') t.ok(c.delayType, `${rule.name} names a delay type`);
  }
});

t.test('the outcomes that matter most', async (t) => {
  t.match(classifyReply('550 5.1.1 <x@y>: Recipient address rejected: User unknown'), { outcome: 'bounced', bounceType: 'Permanent', subType: 'NoEmail' });
  t.match(classifyReply('452 4.2.2 Mailbox full'), { outcome: 'deferred', delayType: 'MailboxFull' });
  t.match(classifyReply('552 5.2.2 Mailbox full'), { outcome: 'bounced', bounceType: 'Transient', subType: 'MailboxFull' }, 'a full mailbox never suppresses');
  t.match(classifyReply('554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org'), { outcome: 'bounced', bounceType: 'Undetermined' }, 'our IP on a blocklist is not the address\'s fault');
  t.match(classifyReply('250 2.0.0 OK 1700000000 x'), { outcome: 'delivered' });
  t.match(classifyReply('421 4.7.0 Try again later, closing connection.'), { outcome: 'deferred' });
  t.match(classifyReply('not smtp at all'), { outcome: 'deferred' }, 'garbage defers, never bounces');
  t.match(classifyReply('550-5.1.1 The email account that you tried to reach does not exist.\n550 5.1.1 Please try double-checking.'), { outcome: 'bounced', subType: 'NoEmail' }, 'multi-line replies');
});

t.test('replies are split into code, enhanced status and text', async (t) => {
  t.same(parseReply('550 5.1.1 No such user'), { code: 550, status: '5.1.1', text: 'No such user' });
  t.same(parseReply('451 Try later'), { code: 451, status: undefined, text: 'Try later' });
  t.equal(parseReply('hello'), undefined);
});
