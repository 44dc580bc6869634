import type { Db } from '../sql/db.js';
import type { TeamRow } from '../sql/tables.js';

export interface TeamsRepo {
  insert(row: TeamRow): Promise<void>;
  byId(id: string): Promise<TeamRow | undefined>;
  byName(name: string): Promise<TeamRow[]>;
  list(): Promise<TeamRow[]>;
  setStatus(id: string, status: TeamRow['status']): Promise<boolean>;
}

export function teamsRepo(db: Db): TeamsRepo {
  return {
    async insert(row) {
      await db.insertInto('teams').values(row).execute();
    },
    byId: (id) => db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst(),
    byName: (name) => db.selectFrom('teams').selectAll().where('name', '=', name).execute(),
    list: () => db.selectFrom('teams').selectAll().orderBy('id', 'desc').execute(),
    async setStatus(id, status) {
      const result = await db.updateTable('teams').set({ status }).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
