import { durationMs } from '../core/queue-words.js';
import type { AdminCommand, Call } from './admin-commands.js';
import { UsageError, type OptionSpec, type Values } from './cli-args.js';

// `svc admin check dns` and `svc admin send-test`: the operator's checks of the appliance itself.

const str = (values: Values, name: string) => values[name] as string | undefined;
const json = { type: 'boolean', doc: 'print the answer as JSON' } as const satisfies OptionSpec;
const checkDuration = (v: string) => (durationMs(v) === undefined ? 'must be a duration like 5s, 90s or 2m' : undefined);
const finalStates = new Set(['delivered', 'bounced', 'suppressed', 'failed', 'canceled']);

type Json = Record<string, unknown>;

const checkDns: AdminCommand = {
  words: 'check dns', name: 'svc admin check dns',
  summary: 'Checks the appliance\'s DNS as the Internet sees it: mail_hostname\'s A/AAAA and their PTR, the SPF record '
    + 'customers\' MAIL FROM points to, the inbound MX target, and outbound port 25; exit 0 when nothing fails.',
  options: {
    'port25-target': { type: 'string', arg: 'HOST[:PORT]', doc: 'where the port 25 check connects (default gmail-smtp-in.l.google.com:25)' },
    timeout: { type: 'string', arg: 'DURATION', check: checkDuration, doc: 'how long the port 25 check waits for the connection (default 5s)' },
    json,
  },
  notes: 'Each line is PASS, WARN or FAIL with the reason. Lookups go through svc\'s own resolver (dns_servers).',
  async run(call, values, _args, out) {
    const timeout = str(values, 'timeout');
    const timeoutMs = timeout === undefined ? undefined : durationMs(timeout)!;
    if (timeoutMs !== undefined && (timeoutMs < 1000 || timeoutMs > 60_000)) throw new UsageError('svc admin check dns: --timeout must be from 1s to 60s');
    const report = await call('POST', '/admin/check/dns', { port25_target: str(values, 'port25-target'), timeout_ms: timeoutMs });
    if (!report) return 1;
    if (values.json) out(JSON.stringify(report, null, 2));
    else {
      const checks = report.checks as Json[];
      const width = Math.max(...checks.map((c) => String(c.check).length));
      for (const c of checks) out(`${String(c.status).toUpperCase().padEnd(4)}  ${String(c.check).padEnd(width)}  ${c.reason}`);
      const count = (s: string) => checks.filter((c) => c.status === s).length;
      out(`${report.mail_hostname}: ${count('pass')} passed, ${count('warn')} warned, ${count('fail')} failed`);
    }
    return report.ok ? 0 : 1;
  },
};

const sendTest: AdminCommand = {
  words: 'send-test', name: 'svc admin send-test',
  summary: 'Sends a test email as a team through the ordinary send path, prints its id, then follows it until it is '
    + 'delivered, bounced or --timeout passes; exit 0 when delivered.',
  options: {
    team: { type: 'string', arg: 'TEAM', doc: 'the team it is sent as (its id or name)', required: true },
    to: { type: 'string', arg: 'ADDRESS', doc: 'the recipient (delivered@<mailbox simulator domain> needs no DNS)', required: true },
    from: { type: 'string', arg: 'ADDRESS', doc: 'an address on one of the team\'s verified domains (default: the onboarding sender, which may send only to the simulator)' },
    timeout: { type: 'string', arg: 'DURATION', check: checkDuration, doc: 'how long to follow it (default 2m)' },
    json,
  },
  notes: 'Each delivery attempt is printed as it is recorded (svc admin queue show EMAIL_ID shows them later too).',
  async run(call, values, _args, out) {
    const sent = await call('POST', '/admin/send-test', { team: str(values, 'team'), to: str(values, 'to'), from: str(values, 'from') });
    if (!sent) return 1;
    if (!values.json) out(`email ${sent.id} accepted: from ${sent.from} to ${sent.to} (team ${sent.team_id})`);
    const timeout = str(values, 'timeout') ?? '2m';
    const shown = await follow(call, String(sent.id), durationMs(timeout)!, values.json ? () => {} : out);
    if (!shown) return 1;
    const recipients = shown.email.recipients as Json[];
    if (values.json) out(JSON.stringify({ ...sent, followed: shown.done, email: shown.email }, null, 2));
    else if (!shown.done) out(`still ${recipients.map((r) => `${r.address} ${r.state}`).join(', ')} after ${timeout}: see svc admin queue show ${sent.id}`);
    else for (const r of recipients) out(`${r.address}: ${r.state}${r.last_response ? ` (${r.last_response})` : ''}`);
    return shown.done && recipients.every((r) => r.state === 'delivered') ? 0 : 1;
  },
};

/** Reads the email's queue view until every recipient is final or the time is up, printing each new attempt. */
async function follow(call: Call, id: string, forMs: number, out: (line: string) => void): Promise<{ email: Json; done: boolean } | undefined> {
  const until = Date.now() + forMs;
  const printed = new Set<string>();
  for (;;) {
    const email = await call('GET', `/admin/queue/${encodeURIComponent(id)}`);
    if (!email) return undefined;
    const recipients = email.recipients as Json[];
    for (const r of recipients) {
      for (const a of r.history as Json[]) {
        const key = `${r.address} ${a.attempt}`;
        if (printed.has(key)) continue;
        printed.add(key);
        out(`  ${a.at}  ${a.outcome}  ${r.address}  #${a.attempt}  ${a.relay ?? '-'}  ${a.reply}`);
      }
    }
    const done = recipients.every((r) => finalStates.has(String(r.state)));
    if (done || Date.now() >= until) return { email, done };
    await new Promise((resolve) => setTimeout(resolve, Math.min(250, Math.max(until - Date.now(), 0))));
  }
}

export const applianceCommands: AdminCommand[] = [checkDns, sendTest];
