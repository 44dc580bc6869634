import { resolve } from 'node:path';
import { adminCall } from './admin-client.js';
import { runTeamAdmin } from './admin-team-commands.js';

type Flags = Record<string, string[]>;

/** One admin socket call: the answer's body, or undefined once the error was printed. */
export type AdminCall = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown> | undefined>;

/** `svc admin …`: each subcommand is one call on the admin socket. Returns the exit code. */
export async function runAdmin(socketPath: string, args: string[], out: (line: string) => void): Promise<number> {
  const [area, action, ...rest] = args;
  const { positional, flags } = parseFlags(rest);
  const one = (name: string) => flags[name]?.at(-1);
  const call: AdminCall = async (method, path, body) => {
    const answer = await adminCall(socketPath, method, path, body);
    if (answer.status >= 400) {
      const err = answer.body as { name?: string; message?: string };
      out(`error: ${err?.name ?? answer.status}: ${err?.message ?? JSON.stringify(answer.body)}`);
      return undefined;
    }
    return answer.body as Record<string, unknown>;
  };
  // One-word commands take a positional argument where others have their action.
  const key = area === 'backup' ? area : `${area ?? ''} ${action ?? ''}`.trim();
  const teamAnswer = await runTeamAdmin(key, positional, one, call, out);
  if (teamAnswer !== undefined) return teamAnswer;
  switch (key) {
    case 'team create': {
      const team = await call('POST', '/admin/teams', { name: positional.join(' ') || one('name'), plan: one('plan') });
      if (!team) return 1;
      out(`team ${team.id} ${JSON.stringify(team.name)} created`);
      return 0;
    }
    case 'team list': {
      const list = await call('GET', '/admin/teams');
      if (!list) return 1;
      for (const t of list.data as Record<string, unknown>[]) out(`${t.id}  ${t.status}  ${t.plan}  ${t.name}`);
      return 0;
    }
    case 'key create': {
      const body: Record<string, unknown> = { team: one('team'), name: one('name') };
      if (one('permission')) body.permission = one('permission');
      if (one('domain')) body.domain_id = one('domain');
      if (one('inbox-access')) body.inbox_access = one('inbox-access');
      const created = await call('POST', '/admin/api-keys', body);
      if (!created) return 1;
      out(`key ${created.id} created for team ${created.team_id}; this token is shown once:`);
      out(String(created.token));
      return 0;
    }
    case 'key list': {
      const qs = one('team') ? `?team=${encodeURIComponent(one('team')!)}` : '';
      const list = await call('GET', `/admin/api-keys${qs}`);
      if (!list) return 1;
      for (const k of list.data as Record<string, unknown>[]) out(`${k.id}  ${k.status}  ${k.permission}  last used ${k.last_used_at ?? 'never'}  ${k.name}`);
      return 0;
    }
    case 'key revoke': {
      // A key id from `key list`, or the leaked token (whole, or its first 20 characters).
      const reference = positional[0] ?? one('key');
      if (!reference) { out('usage: svc admin key revoke KEY_ID|TOKEN'); return 2; }
      const done = await call('POST', '/admin/api-keys/revoke', { key: reference });
      if (!done) return 1;
      out(`key ${done.id} ${JSON.stringify(done.name)} of team ${done.team_id} ${done.revoked ? 'revoked' : 'was already revoked'}`);
      return 0;
    }
    case 'domain list': {
      const qs = one('team') ? `?team=${encodeURIComponent(one('team')!)}` : '';
      const list = await call('GET', `/admin/domains${qs}`);
      if (!list) return 1;
      for (const d of list.data as Record<string, unknown>[]) out(`${d.id}  ${d.status}  ${d.region}  ${d.name}${d.failure_reason ? `  (${d.failure_reason})` : ''}`);
      return 0;
    }
    case 'domain verify': {
      const id = positional[0] ?? one('id');
      if (!id) { out('usage: svc admin domain verify DOMAIN_ID'); return 2; }
      const domain = await call('POST', `/admin/domains/${encodeURIComponent(id)}/verify`);
      if (!domain) return 1;
      out(`${domain.id}  ${domain.status}  ${domain.name}`);
      for (const r of domain.records as Record<string, unknown>[]) out(`  ${r.record}  ${r.type}  ${r.name}  ${r.status}`);
      return domain.status === 'verified' ? 0 : 1;
    }
    case 'backup': {
      // `svc admin backup [PATH]`: PATH is read by the server, so a relative one is made absolute here.
      const path = action;
      const done = await call('POST', '/admin/backup', path ? { path: resolve(path) } : {});
      if (!done) return 1;
      out(`backup written to ${done.path}: database ${done.database_bytes} bytes, ${done.spool_files} spool files (${done.spool_missing} deleted meanwhile), ${done.duration_ms} ms`);
      out('secret.key is not in the backup: keep it apart; a restore needs it to open sealed secrets');
      return 0;
    }
    case 'status': {
      const status = await call('GET', '/admin/status');
      if (!status) return 1;
      out(JSON.stringify(status, null, 2));
      return (status.readiness as { status: string }).status === 'ok' ? 0 : 1;
    }
    default:
      out('usage: svc admin team create NAME [--plan CODE] | team list | team show|suspend|reinstate|trust|untrust TEAM | team plan TEAM CODE | plan list | member add TEAM EMAIL [--name N] [--role admin|member] | member list TEAM | member remove TEAM MEMBER | key create --team T --name N [--permission full_access|sending_access] | key list [--team T] | key revoke KEY_ID|TOKEN | domain list [--team T] | domain verify ID | status | backup [PATH]');
      return 2;
  }
}

function parseFlags(args: string[]): { positional: string[]; flags: Flags } {
  const positional: string[] = [];
  const flags: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) { positional.push(arg); continue; }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const value = inline ?? args[++i] ?? '';
    (flags[name] ??= []).push(value);
  }
  return { positional, flags };
}
