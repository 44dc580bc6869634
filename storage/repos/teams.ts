import type { Db } from '../sql/db.js';
import type { TeamRow } from '../sql/tables.js';

export interface TeamsRepo {
  insert(row: TeamRow): Promise<void>;
  byId(id: string): Promise<TeamRow | undefined>;
  byName(name: string): Promise<TeamRow[]>;
  list(): Promise<TeamRow[]>;
  setStatus(id: string, status: TeamRow['status']): Promise<boolean>;
}

/** The columns of TeamRow; settings columns added later are read by their own areas. */
const teamColumns = ['id', 'name', 'status', 'created_at'] as const;

export function teamsRepo(db: Db): TeamsRepo {
  return {
    async insert(row) {
      await db.insertInto('teams').values(row).execute();
    },
    byId: (id) => db.selectFrom('teams').select(teamColumns).where('id', '=', id).executeTakeFirst(),
    byName: (name) => db.selectFrom('teams').select(teamColumns).where('name', '=', name).execute(),
    list: () => db.selectFrom('teams').select(teamColumns).orderBy('id', 'desc').execute(),
    async setStatus(id, status) {
      const result = await db.updateTable('teams').set({ status }).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
