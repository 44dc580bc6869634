import { teamMembersRepo, type MemberRole, type TeamMemberRow } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { missingField, notFound, validationError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { oneLine } from './text.js';

// The people of a team. Until a console exists they are added by the operator
// (`svc admin member add|list|remove`); GET /team/members lists them to a full_access key.

export const memberRoles: readonly MemberRole[] = ['admin', 'member'];

export interface MemberView {
  object: 'team_member';
  id: string;
  email: string;
  name: string | null;
  role: MemberRole;
  created_at: string;
}

export interface MemberInput {
  email?: unknown;
  name?: unknown;
  role?: unknown;
}

const memberView = (row: TeamMemberRow): MemberView => ({
  object: 'team_member', id: row.id, email: row.email, name: row.name, role: row.role, created_at: row.created_at,
});

// One address, no display name: local@domain with a dotted host name.
const addressShape = /^[^\s@<>(),;:"\\[\]]{1,64}@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/i;

function checkEmail(value: unknown): string {
  if (value === undefined || value === null || value === '') throw missingField('email');
  const email = typeof value === 'string' ? value.trim() : '';
  if (email.length > 254 || !addressShape.test(email.normalize('NFC').replace(/[^\x00-\x7f]/g, 'a'))) {
    throw validationError(422, 'email', 'The `email` field must be one email address.');
  }
  return email;
}

export function membersService(deps: { db: Db; clock: Clock; logger: Logger }) {
  const repo = teamMembersRepo(deps.db);
  const find = async (teamId: string, ref: string) => {
    const row = looksLikeId(ref) ? await repo.byId(teamId, ref.toLowerCase()) : await repo.byEmailKey(teamId, ref.trim().toLowerCase());
    if (!row) throw notFound('Member');
    return row;
  };
  return {
    /** Adds a member; the same address again answers the member already there. */
    async add(teamId: string, input: MemberInput): Promise<MemberView & { created: boolean }> {
      const email = checkEmail(input.email);
      const name = input.name === undefined || input.name === null || input.name === '' ? null : oneLine('name', input.name, 200).trim();
      const role = input.role ?? 'member';
      if (!memberRoles.includes(role as MemberRole)) throw validationError(422, 'role', `The \`role\` field must be one of ${memberRoles.join(', ')}.`);
      const row: TeamMemberRow = { id: newId(), team_id: teamId, email, email_key: email.toLowerCase(), name, role: role as MemberRole, created_at: deps.clock.now().toISOString() };
      const created = await repo.insertIfAbsent(row);
      if (created) deps.logger.info({ teamId, memberId: row.id, role: row.role }, 'team member added');
      const stored = created ? row : (await repo.byEmailKey(teamId, row.email_key))!;
      return { ...memberView(stored), created };
    },

    async list(teamId: string, query: RawPageQuery): Promise<ListEnvelope<MemberView>> {
      const page = await repo.list(teamId, parsePageQuery(query));
      return listOf(page.data.map(memberView), page.has_more);
    },

    /** By id or address. */
    async remove(teamId: string, ref: string): Promise<{ object: 'team_member'; id: string; deleted: true }> {
      const row = await find(teamId, ref);
      await repo.remove(teamId, row.id);
      deps.logger.info({ teamId, memberId: row.id }, 'team member removed');
      return { object: 'team_member', id: row.id, deleted: true };
    },
  };
}

export type MembersService = ReturnType<typeof membersService>;
