import type { AdminCall } from './admin-commands.js';

// `svc admin team show|plan|suspend|reinstate|trust|untrust …`, `svc admin plan list` and
// `svc admin member add|list|remove …`. Answers the exit code, or undefined for a command that
// is not one of these.
export async function runTeamAdmin(key: string, positional: string[], one: (flag: string) => string | undefined, call: AdminCall, out: (line: string) => void): Promise<number | undefined> {
  const team = positional[0] ?? one('team');
  const path = team ? `/admin/teams/${encodeURIComponent(team)}` : '';
  const patch = async (body: Record<string, unknown>, done: (t: Record<string, unknown>) => string) => {
    if (!team) { out(`usage: svc admin ${key} TEAM${key === 'team plan' ? ' PLAN_CODE' : ''}`); return 2; }
    const changed = await call('PATCH', path, body);
    if (!changed) return 1;
    out(done(changed));
    return 0;
  };
  switch (key) {
    case 'plan list': {
      const list = await call('GET', '/admin/plans');
      if (!list) return 1;
      for (const p of list.data as Record<string, unknown>[]) out(`${p.code}  ${JSON.stringify(p.name)}  ${JSON.stringify(p.limits)}${p.ramp ? `  ramp ${JSON.stringify(p.ramp)}` : ''}${p.paid ? '  paid' : ''}`);
      return 0;
    }
    case 'team show': {
      if (!team) { out('usage: svc admin team show TEAM'); return 2; }
      const shown = await call('GET', path);
      if (!shown) return 1;
      out(JSON.stringify(shown, null, 2));
      return 0;
    }
    case 'team plan': {
      const code = positional[1] ?? one('plan');
      if (!code) { out('usage: svc admin team plan TEAM PLAN_CODE'); return 2; }
      return patch({ plan: code }, (t) => `team ${t.id} is on plan ${t.plan}`);
    }
    case 'team suspend':
      return patch({ status: 'suspended' }, (t) => `team ${t.id} suspended: its keys are refused (403 suspended_api_key) and it cannot send`);
    case 'team reinstate':
      return patch({ status: 'active' }, (t) => `team ${t.id} reinstated`);
    case 'team trust':
      return patch({ trusted: true }, (t) => `team ${t.id} trusted: sending tier 3, out of the sandbox`);
    case 'team untrust':
      return patch({ trusted: false }, (t) => `team ${t.id} no longer trusted`);
    case 'member add': {
      const email = positional[1] ?? one('email');
      if (!team || !email) { out('usage: svc admin member add TEAM EMAIL [--name NAME] [--role admin|member]'); return 2; }
      const member = await call('POST', `${path}/members`, { email, name: one('name'), role: one('role') });
      if (!member) return 1;
      out(`member ${member.id} ${member.email} (${member.role}) ${member.created ? 'added to' : 'was already in'} team ${team}`);
      return 0;
    }
    case 'member list': {
      if (!team) { out('usage: svc admin member list TEAM'); return 2; }
      const list = await call('GET', `${path}/members`);
      if (!list) return 1;
      for (const m of list.data as Record<string, unknown>[]) out(`${m.id}  ${m.role}  ${m.email}${m.name ? `  ${JSON.stringify(m.name)}` : ''}`);
      return 0;
    }
    case 'member remove': {
      const member = positional[1] ?? one('member');
      if (!team || !member) { out('usage: svc admin member remove TEAM MEMBER_ID|EMAIL'); return 2; }
      const done = await call('DELETE', `${path}/members/${encodeURIComponent(member)}`);
      if (!done) return 1;
      out(`member ${done.id} removed from team ${team}`);
      return 0;
    }
    default:
      return undefined;
  }
}
