import type { AdminCommand, Call } from './admin-commands.js';
import { UsageError, type Values } from './cli-args.js';

// `svc admin team show|plan|suspend|reinstate|trust|untrust …`, `svc admin plan list` and
// `svc admin member add|list|remove …`: the operator's tools for plans, standing and members.

const str = (values: Values, name: string) => values[name] as string | undefined;
const teamPath = (team: string) => `/admin/teams/${encodeURIComponent(team)}`;

/** A change of one team by PATCH, answered in one line. */
function teamChange(action: string, summary: string, body: Record<string, unknown>, done: (t: Record<string, unknown>) => string): AdminCommand {
  return {
    words: `team ${action}`, name: `svc admin team ${action}`, summary, args: 'TEAM', minArgs: 1, maxArgs: 1,
    async run(call: Call, _values, args, out) {
      const changed = await call('PATCH', teamPath(args[0]!), body);
      if (!changed) return 1;
      out(done(changed));
      return 0;
    },
  };
}

export const teamCommands: AdminCommand[] = [
  {
    words: 'plan list', name: 'svc admin plan list', summary: 'Lists the operator\'s plans (config key plans) with their limits.',
    async run(call, _values, _args, out) {
      const list = await call('GET', '/admin/plans');
      if (!list) return 1;
      for (const p of list.data as Record<string, unknown>[]) out(`${p.code}  ${JSON.stringify(p.name)}  ${JSON.stringify(p.limits)}${p.ramp ? `  ramp ${JSON.stringify(p.ramp)}` : ''}${p.paid ? '  paid' : ''}`);
      return 0;
    },
  },
  {
    words: 'team show', name: 'svc admin team show', summary: 'Shows one team as JSON: plan, standing, usage.', args: 'TEAM', minArgs: 1, maxArgs: 1,
    async run(call, _values, args, out) {
      const shown = await call('GET', teamPath(args[0]!));
      if (!shown) return 1;
      out(JSON.stringify(shown, null, 2));
      return 0;
    },
  },
  {
    words: 'team plan', name: 'svc admin team plan', summary: 'Puts a team on one of the operator\'s plans.', args: 'TEAM PLAN_CODE', minArgs: 2, maxArgs: 2,
    async run(call, _values, args, out) {
      const changed = await call('PATCH', teamPath(args[0]!), { plan: args[1] });
      if (!changed) return 1;
      out(`team ${changed.id} is on plan ${changed.plan}`);
      return 0;
    },
  },
  teamChange('suspend', 'Suspends a team: its keys are refused and it cannot send.', { status: 'suspended' },
    (t) => `team ${t.id} suspended: its keys are refused (403 suspended_api_key) and it cannot send`),
  teamChange('reinstate', 'Reinstates a suspended team.', { status: 'active' }, (t) => `team ${t.id} reinstated`),
  teamChange('trust', 'Marks a team reviewed: sending tier 3, out of the sandbox.', { trusted: true }, (t) => `team ${t.id} trusted: sending tier 3, out of the sandbox`),
  teamChange('untrust', 'Takes the operator\'s review back.', { trusted: false }, (t) => `team ${t.id} no longer trusted`),
  {
    words: 'member add', name: 'svc admin member add', summary: 'Adds a person to a team (until the web console exists).', args: 'TEAM EMAIL', minArgs: 2, maxArgs: 2,
    options: {
      name: { type: 'string', arg: 'NAME', doc: 'the person\'s name' },
      role: { type: 'string', arg: 'ROLE', values: ['admin', 'member'], doc: 'admin or member (default member)' },
    },
    async run(call, values, args, out) {
      const member = await call('POST', `${teamPath(args[0]!)}/members`, { email: args[1], name: str(values, 'name'), role: str(values, 'role') });
      if (!member) return 1;
      out(`member ${member.id} ${member.email} (${member.role}) ${member.created ? 'added to' : 'was already in'} team ${args[0]}`);
      return 0;
    },
  },
  {
    words: 'member list', name: 'svc admin member list', summary: 'Lists a team\'s members.', args: 'TEAM', minArgs: 1, maxArgs: 1,
    async run(call, _values, args, out) {
      const list = await call('GET', `${teamPath(args[0]!)}/members`);
      if (!list) return 1;
      for (const m of list.data as Record<string, unknown>[]) out(`${m.id}  ${m.role}  ${m.email}${m.name ? `  ${JSON.stringify(m.name)}` : ''}`);
      return 0;
    },
  },
  {
    words: 'member remove', name: 'svc admin member remove', summary: 'Removes a person from a team.', args: 'TEAM MEMBER_ID|EMAIL', minArgs: 2, maxArgs: 2,
    async run(call, _values, args, out) {
      if (!args[1]) throw new UsageError('svc admin member remove: a MEMBER is needed');
      const done = await call('DELETE', `${teamPath(args[0]!)}/members/${encodeURIComponent(args[1])}`);
      if (!done) return 1;
      out(`member ${done.id} removed from team ${args[0]}`);
      return 0;
    },
  },
];
