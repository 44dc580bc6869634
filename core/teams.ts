import type { TeamsRepo } from '../storage/repos/index.js';
import type { TeamRow } from '../storage/sql/index.js';
import { isoNow, type Clock } from './clock.js';
import { missingField, notFound, ServiceError, validationError } from './errors.js';
import { looksLikeId, newId } from './ids.js';

export interface TeamView {
  object: 'team';
  id: string;
  name: string;
  status: TeamRow['status'];
  created_at: string;
}

const toView = (row: TeamRow): TeamView => ({ object: 'team', id: row.id, name: row.name, status: row.status, created_at: row.created_at });

export function teamsService(deps: { repo: TeamsRepo; clock: Clock }) {
  return {
    async create(name: string | undefined): Promise<TeamView> {
      if (name === undefined) throw missingField('name');
      if (name.trim() === '' || name.length > 255) throw validationError(422, 'name', 'A team name is 1-255 characters.');
      const row: TeamRow = { id: newId(), name, status: 'active', created_at: isoNow(deps.clock) };
      await deps.repo.insert(row);
      return toView(row);
    },

    async list(): Promise<TeamView[]> {
      return (await deps.repo.list()).map(toView);
    },

    /** The operator names a team by id or by its (unique enough) name. */
    async resolve(idOrName: string): Promise<TeamView> {
      if (looksLikeId(idOrName)) {
        const byId = await deps.repo.byId(idOrName.toLowerCase());
        if (byId) return toView(byId);
      }
      const byName = await deps.repo.byName(idOrName);
      if (byName.length === 1) return toView(byName[0]!);
      if (byName.length > 1) throw validationError(422, 'team', `${byName.length} teams are named "${idOrName}"; use the team id.`);
      throw notFound('Team');
    },

    async setStatus(id: string, status: TeamRow['status']): Promise<void> {
      if (!(await deps.repo.setStatus(id, status))) throw new ServiceError(404, 'not_found', 'Team not found');
    },
  };
}

export type TeamsService = ReturnType<typeof teamsService>;
