import { regionNames } from '../config/regions.js';
import { durationMs, queueStates } from '../core/queue-words.js';
import type { AdminCommand, Call } from './admin-commands.js';
import { adminStream } from './admin-client.js';
import { UsageError, type OptionSpec, type Values } from './cli-args.js';
import { ageText, attemptLine, showLines, summaryLines, table, untilText } from './queue-text.js';

// `svc admin queue summary|list|show|flush|hold|release|delete` and `svc admin trace`: the
// operator's queue tools (compare postqueue, postsuper and postcat). Reads print aligned plain
// text, or the admin socket's JSON with --json.

const str = (values: Values, name: string) => values[name] as string | undefined;
const json = { type: 'boolean', doc: 'print the answer as JSON' } as const satisfies OptionSpec;
const region = { type: 'string', values: regionNames, doc: 'only this sending region' } as const satisfies OptionSpec;
const domain = { type: 'string', arg: 'DOMAIN', doc: 'only recipients at this destination domain' } as const satisfies OptionSpec;
const checkDuration = (v: string) => (durationMs(v) === undefined ? 'must be a duration like 90s, 15m, 2h or 3d' : undefined);
const checkLimit = (v: string) => (/^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= 1000 ? undefined : 'must be a whole number from 1 to 1000');

function queryString(params: Record<string, string | boolean | undefined>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== false) as [string, string | boolean][];
  return entries.length ? `?${entries.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')}` : '';
}

/** `EMAIL_ID`, `--domain D` or (flush) `--region R`: exactly one. */
function target(name: string, values: Values, args: string[], allowRegion: boolean): Record<string, string> {
  const given: Record<string, string> = {};
  if (args[0]) given.email_id = args[0];
  if (str(values, 'domain')) given.domain = str(values, 'domain')!;
  if (allowRegion && str(values, 'region')) given.region = str(values, 'region')!;
  if (Object.keys(given).length !== 1) {
    throw new UsageError(`${name}: give one of EMAIL_ID, --domain DOMAIN${allowRegion ? ' or --region REGION' : ''} (see ${name} --help)`);
  }
  return given;
}

const targetText = (t: Record<string, string>) => (t.email_id ? `of email ${t.email_id}` : t.domain ? `to ${t.domain}` : `in ${t.region}`);

type Done = (n: number, t: Record<string, string>, regions: string[]) => string;

function moveCommand(action: 'flush' | 'hold' | 'release', summary: string, done: Done): AdminCommand {
  const name = `svc admin queue ${action}`;
  return {
    words: `queue ${action}`, name, summary, args: '[EMAIL_ID]', maxArgs: 1,
    options: { domain, ...(action === 'flush' ? { region: { ...region, doc: 'every queued recipient of this region' } } : {}), json },
    async run(call: Call, values, args, out) {
      const body = target(name, values, args, action === 'flush');
      const moved = await call('POST', `/admin/queue/${action}`, body);
      if (!moved) return 1;
      if (values.json) out(JSON.stringify(moved, null, 2));
      else out(done(moved.recipients as number, body, moved.regions as string[]));
      return 0;
    },
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const queueCommands: AdminCommand[] = [
  {
    words: 'queue summary', name: 'svc admin queue summary',
    summary: 'The outbound queue per region and destination: counts by state, the oldest message, the next attempt.',
    options: { region, limit: { type: 'string', arg: 'N', check: checkLimit, doc: 'destinations shown, the busiest first (default 50)' }, json },
    async run(call, values, _args, out) {
      const summary = await call('GET', `/admin/queue/summary${queryString({ region: str(values, 'region'), limit: str(values, 'limit') })}`);
      if (!summary) return 1;
      if (values.json) out(JSON.stringify(summary, null, 2));
      else for (const line of summaryLines(summary)) out(line);
      return 0;
    },
  },
  {
    words: 'queue list', name: 'svc admin queue list', summary: 'Lists recipients waiting in the outbound queue, oldest first.',
    options: {
      region, domain, state: { type: 'string', values: queueStates, doc: 'only recipients in this state' },
      team: { type: 'string', arg: 'TEAM', doc: 'only this team\'s mail (its id or name)' },
      'older-than': { type: 'string', arg: 'DURATION', check: checkDuration, doc: 'only mail accepted at least this long ago (90s, 15m, 2h, 3d)' },
      limit: { type: 'string', arg: 'N', check: checkLimit, doc: 'at most N recipients (default 100)' }, json,
    },
    async run(call, values, _args, out) {
      const list = await call('GET', `/admin/queue${queryString({
        region: str(values, 'region'), domain: str(values, 'domain'), state: str(values, 'state'), team: str(values, 'team'),
        older_than: str(values, 'older-than'), limit: str(values, 'limit'),
      })}`);
      if (!list) return 1;
      if (values.json) { out(JSON.stringify(list, null, 2)); return 0; }
      const rows = list.data as Record<string, unknown>[];
      if (rows.length === 0) { out('no recipient in the queue matches'); return 0; }
      const now = Date.now();
      for (const line of table(['EMAIL ID', 'STATE', 'TRIES', 'AGE', 'NEXT', 'REGION', 'RECIPIENT', 'LAST REPLY'], rows.map((r) => [
        String(r.email_id), String(r.state), String(r.attempts), ageText(String(r.accepted_at), now),
        untilText(r.next_attempt_at as string | null, now, r.state as string), String(r.region), String(r.address),
        String(r.last_response ?? '').slice(0, 70),
      ]))) out(line);
      if (list.has_more) out(`… more recipients match: narrow the filters or raise --limit`);
      return 0;
    },
  },
  {
    words: 'queue show', name: 'svc admin queue show', args: 'EMAIL_ID', minArgs: 1, maxArgs: 1,
    summary: 'Shows one message: envelope, headers, each recipient\'s state and attempts with the remote replies.',
    options: {
      recipient: { type: 'string', arg: 'ADDRESS', doc: 'only this recipient' },
      body: { type: 'boolean', doc: 'also print the message\'s text and HTML bodies and its attachments\' names' }, json,
    },
    async run(call, values, args, out) {
      const query = queryString({ recipient: str(values, 'recipient'), body: values.body });
      const shown = await call('GET', `/admin/queue/${encodeURIComponent(args[0]!)}${query}`);
      if (!shown) return 1;
      if (values.json) out(JSON.stringify(shown, null, 2));
      else for (const line of showLines(shown)) out(line);
      return 0;
    },
  },
  moveCommand('flush', 'Makes queued mail due now and wakes its region\'s outbound queue (held mail stays held).',
    (n, t, regions) => `${plural(n, 'recipient')} ${targetText(t)} due now`
      + (regions.length ? `; woke the outbound queue of ${regions.join(', ')}` : '')),
  moveCommand('hold', 'Holds queued mail: the outbound queue leaves it until it is released.',
    (n, t) => `${plural(n, 'recipient')} ${targetText(t)} held`),
  moveCommand('release', 'Releases held mail back into the queue, due at the time it had.',
    (n, t) => `${plural(n, 'recipient')} ${targetText(t)} released`),
  {
    words: 'queue delete', name: 'svc admin queue delete', args: 'EMAIL_ID', minArgs: 1, maxArgs: 1,
    summary: 'Gives up on a message: each recipient not yet final is failed with the reason and an email.failed event.',
    options: { reason: { type: 'string', arg: 'TEXT', doc: 'why, kept in the failed reason (deleted_by_operator: TEXT)' }, json },
    notes: 'Nothing is dropped silently: the team sees email.failed (webhooks too). '
      + 'A message being submitted right now is refused: try again in a moment.',
    async run(call, values, args, out) {
      const body = str(values, 'reason') ? { reason: str(values, 'reason') } : {};
      const done = await call('POST', `/admin/queue/${encodeURIComponent(args[0]!)}/delete`, body);
      if (!done) return 1;
      if (values.json) { out(JSON.stringify(done, null, 2)); return 0; }
      const failed = done.failed as string[];
      out(failed.length ? `email ${done.email_id}: ${plural(failed.length, 'recipient')} failed (${done.reason}); email.failed written for each`
        : `email ${done.email_id}: nothing to fail, every recipient already has its outcome`);
      for (const f of done.final as { address: string; state: string }[]) out(`  ${f.address} already ${f.state}`);
      return 0;
    },
  },
  {
    words: 'trace', name: 'svc admin trace', args: '[EMAIL_ID|ADDRESS|DOMAIN]', maxArgs: 1,
    summary: 'Prints each delivery attempt live as it happens (of one email, address or destination; all without one).',
    options: { timeout: { type: 'string', arg: 'DURATION', check: checkDuration, doc: 'stop after this long (default: until Ctrl-C)' }, json },
    async run(_call, values, args, out, socket) {
      const stop = new AbortController();
      const interrupt = () => stop.abort();
      process.once('SIGINT', interrupt);
      const timeout = str(values, 'timeout') ? setTimeout(interrupt, durationMs(str(values, 'timeout')!)) : undefined;
      try {
        const end = await adminStream(socket(), `/admin/trace${queryString({ target: args[0] })}`, (line) => {
          const l = line as Record<string, unknown>;
          if (l.object === 'trace') { if (!values.json) out(`tracing delivery attempts${args[0] ? ` of ${args[0]}` : ''}; Ctrl-C stops`); return; }
          out(values.json ? JSON.stringify(l) : attemptLine(l));
        }, stop.signal);
        if (end.status >= 400) {
          const err = end.body as { name?: string; message?: string } | undefined;
          out(`error: ${err?.name ?? end.status}: ${err?.message ?? JSON.stringify(end.body)}`);
          return 1;
        }
        return 0;
      } finally {
        clearTimeout(timeout);
        process.removeListener('SIGINT', interrupt);
      }
    },
  },
];
