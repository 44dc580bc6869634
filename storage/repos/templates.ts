import type { Db } from '../sql/db.js';
import { paginate, type Page, type PageQuery } from '../sql/paginate.js';
import type { SavedBlockRow, TemplateRow, TemplateVersionRow } from './templates-tables.js';

export type TemplateChange = Partial<Pick<TemplateRow, 'name' | 'alias' | 'current_version_id' | 'published_version_id' | 'published_at' | 'brand_overrides'>>
  & { updated_at: string };
export type TemplateVersionChange = Partial<Omit<TemplateVersionRow, 'id' | 'template_id' | 'team_id' | 'number' | 'created_at'>> & { updated_at: string };


export interface TemplatesRepo {
  /** Inserts unless a live template of the team has the alias; answers whether it inserted. */
  insertIfAbsent(row: TemplateRow): Promise<boolean>;
  insertVersion(row: TemplateVersionRow): Promise<void>;
  byId(teamId: string, id: string): Promise<TemplateRow | undefined>;
  byAlias(teamId: string, alias: string): Promise<TemplateRow | undefined>;
  list(teamId: string, page: PageQuery): Promise<Page<TemplateRow>>;
  update(teamId: string, id: string, change: TemplateChange): Promise<void>;
  markDeleted(teamId: string, id: string, at: string): Promise<boolean>;
  version(teamId: string, versionId: string): Promise<TemplateVersionRow | undefined>;
  updateVersion(teamId: string, versionId: string, change: TemplateVersionChange): Promise<void>;
  /** Updates the version only while its `updated_at` is still `seen`; answers whether it did. */
  updateVersionIf(teamId: string, versionId: string, seen: string, change: TemplateVersionChange): Promise<boolean>;
  /** Versions of live templates whose layout names this saved block (a LIKE on the id, checked by the caller). */
  versionsNaming(teamId: string, savedBlockId: string): Promise<TemplateVersionRow[]>;
  /** Total size of the team's brand kit uploads among these ids (the image weight check). */
  uploadBytes(teamId: string, ids: readonly string[]): Promise<number>;
  insertSavedBlock(row: SavedBlockRow): Promise<void>;
  savedBlock(teamId: string, id: string): Promise<SavedBlockRow | undefined>;
  savedBlocks(teamId: string, ids: readonly string[]): Promise<SavedBlockRow[]>;
  listSavedBlocks(teamId: string, page: PageQuery): Promise<Page<SavedBlockRow>>;
  updateSavedBlock(teamId: string, id: string, change: Partial<Pick<SavedBlockRow, 'name' | 'content_json'>> & { updated_at: string }): Promise<void>;
  markSavedBlockDeleted(teamId: string, id: string, at: string): Promise<boolean>;
}

export function templatesRepo(db: Db): TemplatesRepo {
  const live = () => db.selectFrom('templates').selectAll().where('deleted_at', 'is', null);
  const liveBlocks = () => db.selectFrom('saved_blocks').selectAll().where('deleted_at', 'is', null);
  return {
    async insertIfAbsent(row) {
      const result = await db.insertInto('templates').values(row)
        .onConflict((oc) => oc.columns(['team_id', 'alias']).where('deleted_at', 'is', null).doNothing()).executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async insertVersion(row) {
      await db.insertInto('template_versions').values(row).execute();
    },
    byId: (teamId, id) => live().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    byAlias: (teamId, alias) => live().where('team_id', '=', teamId).where('alias', '=', alias).executeTakeFirst(),
    list: (teamId, page) => paginate(db, live().where('team_id', '=', teamId), 'id', page),
    async update(teamId, id, change) {
      await db.updateTable('templates').set(change).where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).execute();
    },
    async markDeleted(teamId, id, at) {
      const r = await db.updateTable('templates').set({ deleted_at: at, updated_at: at })
        .where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    version: (teamId, versionId) => db.selectFrom('template_versions').selectAll()
      .where('team_id', '=', teamId).where('id', '=', versionId).executeTakeFirst(),
    async updateVersion(teamId, versionId, change) {
      await db.updateTable('template_versions').set(change).where('team_id', '=', teamId).where('id', '=', versionId).execute();
    },
    async updateVersionIf(teamId, versionId, seen, change) {
      const r = await db.updateTable('template_versions').set(change)
        .where('team_id', '=', teamId).where('id', '=', versionId).where('updated_at', '=', seen).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    // From the team's live templates to their current and published versions: joined the other
    // way, SQLite read every version of every team (and matched its layout) to find a team's few.
    versionsNaming: (teamId, savedBlockId) => db.selectFrom('templates as t')
      .crossJoin('template_versions as v')
      .selectAll('v')
      .where('t.team_id', '=', teamId).where('t.deleted_at', 'is', null).where('v.team_id', '=', teamId).whereRef('v.template_id', '=', 't.id')
      .where((eb) => eb.or([eb('v.id', '=', eb.ref('t.current_version_id')), eb('v.id', '=', eb.ref('t.published_version_id'))]))
      .where('v.layout_json', 'like', `%${savedBlockId}%`)
      .execute(),
    async uploadBytes(teamId, ids) {
      if (ids.length === 0) return 0;
      const rows = await db.selectFrom('brand_kit_uploads').select('size').where('team_id', '=', teamId).where('id', 'in', [...ids]).execute();
      return rows.reduce((sum, r) => sum + Number(r.size), 0);
    },
    async insertSavedBlock(row) {
      await db.insertInto('saved_blocks').values(row).execute();
    },
    savedBlock: (teamId, id) => liveBlocks().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    savedBlocks: async (teamId, ids) => ids.length === 0 ? [] : liveBlocks().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute(),
    listSavedBlocks: (teamId, page) => paginate(db, liveBlocks().where('team_id', '=', teamId), 'id', page),
    async updateSavedBlock(teamId, id, change) {
      await db.updateTable('saved_blocks').set(change).where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).execute();
    },
    async markSavedBlockDeleted(teamId, id, at) {
      const r = await db.updateTable('saved_blocks').set({ deleted_at: at, updated_at: at })
        .where('team_id', '=', teamId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
  };
}
