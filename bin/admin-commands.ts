import { resolve } from 'node:path';
import { adminCall } from './admin-client.js';
import { groupHelp, helpText, parseCommand, UsageError, type CommandSpec, type Values } from './cli-args.js';
import { teamCommands } from './admin-team-commands.js';
import { queueCommands } from './admin-queue-commands.js';
import { applianceCommands } from './admin-appliance-commands.js';

/** One admin socket call: the answer's body, or undefined once the error was printed. */
export type Call = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown> | undefined>;

export interface AdminCommand extends CommandSpec {
  /** The words after `svc admin`: `key create`, `status`. */
  words: string;
  /** `socket`: the admin socket's path, for a command that streams (svc admin trace). */
  run(call: Call, values: Values, args: string[], out: (line: string) => void, socket: () => string): Promise<number>;
}

const str = (values: Values, name: string) => values[name] as string | undefined;
const query = (name: string, value: string | undefined) => (value ? `?${name}=${encodeURIComponent(value)}` : '');
const teamOption = { type: 'string', arg: 'TEAM', doc: 'only this team (its id or name)' } as const;

const commands: AdminCommand[] = [
  {
    words: 'team create', name: 'svc admin team create', summary: 'Creates a team and prints its id.',
    args: '[NAME…]', maxArgs: 20,
    options: {
      name: { type: 'string', arg: 'NAME', doc: 'the team\'s name (or give it as the arguments)' },
      plan: { type: 'string', arg: 'CODE', doc: 'the operator\'s plan the team starts on (svc admin plan list); default: the default plan' },
    },
    async run(call, values, args, out) {
      const name = args.join(' ') || str(values, 'name');
      if (!name) throw new UsageError('svc admin team create: a NAME is needed (see svc admin team create --help)');
      const team = await call('POST', '/admin/teams', { name, plan: str(values, 'plan') });
      if (!team) return 1;
      out(`team ${team.id} ${JSON.stringify(team.name)} created`);
      return 0;
    },
  },
  {
    words: 'team list', name: 'svc admin team list', summary: 'Lists every team: id, status, plan, name.',
    async run(call, _values, _args, out) {
      const list = await call('GET', '/admin/teams');
      if (!list) return 1;
      for (const t of list.data as Record<string, unknown>[]) out(`${t.id}  ${t.status}  ${t.plan}  ${t.name}`);
      return 0;
    },
  },
  {
    words: 'key create', name: 'svc admin key create', summary: 'Creates an API key for a team and prints its token, once.',
    options: {
      team: { type: 'string', arg: 'TEAM', doc: 'the team (its id or name)', required: true },
      name: { type: 'string', arg: 'NAME', doc: 'a name for the key', required: true },
      permission: { type: 'string', values: ['full_access', 'sending_access'], doc: 'what the key may do (default full_access)' },
      domain: { type: 'string', arg: 'DOMAIN_ID', doc: 'a sending_access key may send only from this domain' },
      'inbox-access': { type: 'string', values: ['none', 'create', 'read', 'write'], doc: 'what the key may do with received mail' },
    },
    async run(call, values, _args, out) {
      const body: Record<string, unknown> = { team: str(values, 'team'), name: str(values, 'name') };
      if (values.permission) body.permission = values.permission;
      if (values.domain) body.domain_id = values.domain;
      if (values['inbox-access']) body.inbox_access = values['inbox-access'];
      const created = await call('POST', '/admin/api-keys', body);
      if (!created) return 1;
      out(`key ${created.id} created for team ${created.team_id}; this token is shown once:`);
      out(String(created.token));
      return 0;
    },
  },
  {
    words: 'key list', name: 'svc admin key list', summary: 'Lists API keys (never their tokens): id, status, permission, last use, name.',
    options: { team: teamOption },
    async run(call, values, _args, out) {
      const list = await call('GET', `/admin/api-keys${query('team', str(values, 'team'))}`);
      if (!list) return 1;
      for (const k of list.data as Record<string, unknown>[]) out(`${k.id}  ${k.status}  ${k.permission}  last used ${k.last_used_at ?? 'never'}  ${k.name}`);
      return 0;
    },
  },
  {
    words: 'key revoke', name: 'svc admin key revoke', summary: 'Revokes a key at once, by its id or by the leaked token (whole, or its first 20 characters).',
    args: 'KEY_ID|TOKEN', minArgs: 1, maxArgs: 1,
    async run(call, _values, args, out) {
      const done = await call('POST', '/admin/api-keys/revoke', { key: args[0] });
      if (!done) return 1;
      out(`key ${done.id} ${JSON.stringify(done.name)} of team ${done.team_id} ${done.revoked ? 'revoked' : 'was already revoked'}`);
      return 0;
    },
  },
  {
    words: 'domain list', name: 'svc admin domain list', summary: 'Lists sending domains: id, status, region, name.',
    options: { team: teamOption },
    async run(call, values, _args, out) {
      const list = await call('GET', `/admin/domains${query('team', str(values, 'team'))}`);
      if (!list) return 1;
      for (const d of list.data as Record<string, unknown>[]) out(`${d.id}  ${d.status}  ${d.region}  ${d.name}${d.failure_reason ? `  (${d.failure_reason})` : ''}`);
      return 0;
    },
  },
  {
    words: 'domain verify', name: 'svc admin domain verify', summary: 'Checks a domain\'s DNS records now and prints each one\'s status; exit 0 when verified.',
    args: 'DOMAIN_ID', minArgs: 1, maxArgs: 1,
    async run(call, _values, args, out) {
      const domain = await call('POST', `/admin/domains/${encodeURIComponent(args[0]!)}/verify`);
      if (!domain) return 1;
      out(`${domain.id}  ${domain.status}  ${domain.name}`);
      for (const r of domain.checks as Record<string, unknown>[]) {
        out(`  ${r.record}  ${r.type}  ${r.name}.  ${r.status}`);
        if (r.status !== 'verified') out(`    expected ${JSON.stringify(r.expected)}; ${r.reason ?? 'not checked yet'}`);
      }
      return domain.status === 'verified' ? 0 : 1;
    },
  },
  {
    words: 'status', name: 'svc admin status', summary: 'The running appliance as JSON: version, every role\'s process, readiness; exit 0 when ready.',
    async run(call, _values, _args, out) {
      const status = await call('GET', '/admin/status');
      if (!status) return 1;
      out(JSON.stringify(status, null, 2));
      return (status.readiness as { status: string }).status === 'ok' ? 0 : 1;
    },
  },
  {
    words: 'backup', name: 'svc admin backup', summary: 'Writes a consistent copy of the database and the received mail to PATH (a new or empty folder).',
    args: '[PATH]', maxArgs: 1,
    notes: 'Without PATH the copy goes to <data_dir>/backups/backup-<time>. secret.key is never in it: keep that file apart.',
    async run(call, _values, args, out) {
      // PATH is read by the server, so a relative one is made absolute here.
      const done = await call('POST', '/admin/backup', args[0] ? { path: resolve(args[0]) } : {});
      if (!done) return 1;
      out(`backup written to ${done.path}: database ${done.database_bytes} bytes, ${done.spool_files} spool files (${done.spool_missing} deleted meanwhile), ${done.duration_ms} ms`);
      out('secret.key is not in the backup: keep it apart; a restore needs it to open sealed secrets');
      return 0;
    },
  },
  ...teamCommands,
  ...queueCommands,
  ...applianceCommands,
];

const adminHelp = () => groupHelp('usage: svc admin COMMAND … (each command takes --help)', commands,
  'Commands talk to the running api role over its admin socket (admin_socket, or <data_dir>/admin.sock).');

/**
 * `svc admin …`: each command is one call on the admin socket; `out` gets each line of the answer.
 * The socket may be given as a function: it is asked only once a command is about to call it, so
 * help and usage errors need no configuration. Returns the exit code.
 */
export async function runAdmin(socket: string | (() => string), args: readonly string[], out: (line: string) => void): Promise<number> {
  const io = { socket: typeof socket === 'string' ? () => socket : socket, out };
  const [first, second] = args;
  if (first === undefined) throw new UsageError('svc admin: a command is needed (see svc admin --help)');
  if (first === 'help' || first === '--help' || first === '-h') {
    io.out(adminHelp().trimEnd());
    return 0;
  }
  const command = commands.find((c) => c.words === `${first} ${second}`) ?? commands.find((c) => c.words === first);
  if (!command) return unknownCommand(args, io);
  const parsed = parseCommand(command, args.slice(command.words.split(' ').length));
  if (parsed.help) {
    io.out(helpText(command).trimEnd());
    return 0;
  }
  const path = io.socket();
  const call: Call = async (method, route, body) => {
    const answer = await adminCall(path, method, route, body);
    if (answer.status < 400) return answer.body as Record<string, unknown>;
    const err = answer.body as { name?: string; message?: string };
    io.out(`error: ${err?.name ?? answer.status}: ${err?.message ?? JSON.stringify(answer.body)}`);
    return undefined;
  };
  return command.run(call, parsed.values, parsed.positionals, io.out, () => path);
}

/** An area without a known action (`svc admin key frob`), or no such area at all. */
function unknownCommand(args: readonly string[], io: { out(line: string): void }): number {
  const [first, second] = args;
  const actions = commands.filter((c) => c.words.startsWith(`${first} `));
  if (actions.length === 0) {
    const areas = [...new Set(commands.map((c) => c.words.split(' ')[0]))];
    throw new UsageError(`svc admin: unknown command "${first}"; one of ${areas.join(', ')} (see svc admin --help)`);
  }
  if (args.slice(1).some((a) => a === '--help' || a === '-h')) {
    io.out(groupHelp(`usage: svc admin ${first} ACTION … (each action takes --help)`, actions).trimEnd());
    return 0;
  }
  const names = actions.map((c) => c.words.split(' ')[1]).join(', ');
  const problem = second === undefined || second.startsWith('-') ? 'an action is needed' : `unknown action "${second}"`;
  throw new UsageError(`svc admin ${first}: ${problem}; one of ${names} (see svc admin ${first} --help)`);
}
