import type { Db } from '../sql/db.js';
import type { BrandKitUploadRow } from './team-tables.js';

/** Images uploaded for the brand kit (migration 013): kept in the database, served on the public router. */
export function brandKitUploadsRepo(db: Db) {
  return {
    async insert(row: BrandKitUploadRow): Promise<void> {
      await db.insertInto('brand_kit_uploads').values(row).execute();
    },
    /** The stored image, whoever's it is: the hosted URL is public (mail clients fetch it). */
    byId: (id: string): Promise<BrandKitUploadRow | undefined> =>
      db.selectFrom('brand_kit_uploads').selectAll().where('id', '=', id).executeTakeFirst(),
    /** The stored type of one of the team's own uploads, or undefined (none, or another team's). */
    async typeOfOwn(teamId: string, id: string): Promise<string | undefined> {
      const row = await db.selectFrom('brand_kit_uploads').select('content_type')
        .where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
      return row?.content_type;
    },
  };
}

export type BrandKitUploadsRepo = ReturnType<typeof brandKitUploadsRepo>;
