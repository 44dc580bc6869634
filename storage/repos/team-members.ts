import type { Db } from '../sql/db.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { TeamMemberRow } from './team-tables.js';

export type { MemberRole, TeamMemberRow } from './team-tables.js';

export interface TeamMembersRepo {
  /** Inserts unless the team has a member with that address; answers whether it inserted. */
  insertIfAbsent(row: TeamMemberRow): Promise<boolean>;
  byEmailKey(teamId: string, emailKey: string): Promise<TeamMemberRow | undefined>;
  byId(teamId: string, id: string): Promise<TeamMemberRow | undefined>;
  list(teamId: string, page: PageQuery): Promise<Page<TeamMemberRow>>;
  remove(teamId: string, id: string): Promise<boolean>;
}

export function teamMembersRepo(db: Db): TeamMembersRepo {
  return {
    async insertIfAbsent(row) {
      const result = await db.insertInto('team_members').values(row)
        .onConflict((oc) => oc.columns(['team_id', 'email_key']).doNothing()).executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    byEmailKey: (teamId, emailKey) => db.selectFrom('team_members').selectAll().where('team_id', '=', teamId).where('email_key', '=', emailKey).executeTakeFirst(),
    byId: (teamId, id) => db.selectFrom('team_members').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    list: (teamId, page) => paginate(db, db.selectFrom('team_members').selectAll().where('team_id', '=', teamId), 'id', page),
    async remove(teamId, id) {
      const result = await db.deleteFrom('team_members').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
