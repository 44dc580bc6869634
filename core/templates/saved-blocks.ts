import type { Db } from '../../storage/sql/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import { templatesRepo, type SavedBlockRow, type TemplatesRepo, type TemplateVersionRow } from '../../storage/repos/index.js';
import { isoNow } from '../clock.js';
import { invalidParameter, missingField, notFound, ServiceError, validationError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { buildContent, contentOf, type VersionContent } from './content.js';
import {
  checkSavedContent, savedBlockKinds, savedBlockLookup, savedContentOf, withSavedBlocks, type SavedBlockKind, type SavedBlockLookup,
} from './saved-refs.js';
import type { TemplatesDeps } from './service.js';

// Saved blocks: a team's reusable blocks and sections (a header, a footer, any block or section).
// A layout names one by `saved_block_id` and holds a copy of it. Editing one rewrites that copy in
// every live template's published version and open draft that uses it, compiling each once, now
// (sends keep rendering from compiled versions); deleting one leaves every template its copy.

export const SAVED_BLOCK_NAME_MAX = 200;
/** How often a rewrite that lost a race with a template edit is tried again. */
const REWRITE_TRIES = 3;

export interface SavedBlockInput {
  name?: string;
  kind?: string;
  content?: unknown;
}

export interface SavedBlockView {
  object: 'saved_block';
  id: string;
  name: string;
  kind: SavedBlockKind;
  content: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

type Ref = { object: 'saved_block'; id: string };

export function savedBlocksService(deps: TemplatesDeps) {
  const repo = templatesRepo(deps.db);
  const find = async (teamId: string, id: string): Promise<SavedBlockRow> => {
    const row = typeof id === 'string' && looksLikeId(id) ? await repo.savedBlock(teamId, id.toLowerCase()) : undefined;
    if (!row) throw notFound('Saved block');
    return row;
  };

  return {
    async create(teamId: string, input: SavedBlockInput): Promise<Ref> {
      const name = checkName(input.name);
      const kind = checkKind(input.kind);
      if (input.content === undefined || input.content === null) throw missingField('content');
      const content = await checkSavedContent(kind, input.content);
      const at = isoNow(deps.clock);
      const row: SavedBlockRow = {
        id: newId(), team_id: teamId, name, kind, content_json: JSON.stringify(content), created_at: at, updated_at: at, deleted_at: null,
      };
      await repo.insertSavedBlock(row);
      deps.logger.info({ teamId, savedBlockId: row.id, kind }, 'saved block created');
      return { object: 'saved_block', id: row.id };
    },

    async list(teamId: string, query: RawPageQuery): Promise<ListEnvelope<SavedBlockView>> {
      const page = await repo.listSavedBlocks(teamId, parsePageQuery(query));
      return listOf(page.data.map(savedBlockView), page.has_more);
    },

    get: async (teamId: string, id: string): Promise<SavedBlockView> => savedBlockView(await find(teamId, id)),

    /** A new name changes only the block; new content is copied into every template version using it. */
    update: (teamId: string, id: string, input: SavedBlockInput & { id?: string }): Promise<Ref> => updateSavedBlock(deps, find, teamId, id, input),

    /** Soft: templates keep the copy they hold; their next save drops the reference. */
    async remove(teamId: string, id: string): Promise<Ref & { deleted: true }> {
      const block = await find(teamId, id);
      if (!(await repo.markSavedBlockDeleted(teamId, block.id, isoNow(deps.clock)))) throw notFound('Saved block');
      deps.logger.info({ teamId, savedBlockId: block.id }, 'saved block deleted');
      return { object: 'saved_block', id: block.id, deleted: true };
    },
  };
}

export type SavedBlocksService = ReturnType<typeof savedBlocksService>;

async function updateSavedBlock(
  deps: TemplatesDeps, find: (teamId: string, id: string) => Promise<SavedBlockRow>,
  teamId: string, id: string, input: SavedBlockInput & { id?: string },
): Promise<Ref> {
  const repo = templatesRepo(deps.db);
  const block = await find(teamId, id);
  if (input.id !== undefined && String(input.id).toLowerCase() !== block.id) {
    throw invalidParameter('id', 'The `id` in the body must be the saved block\'s own id.');
  }
  if (input.kind !== undefined && input.kind !== block.kind) {
    throw validationError(422, 'kind', 'A saved block keeps its kind; save a new one instead.');
  }
  const at = isoNow(deps.clock);
  const change: Parameters<TemplatesRepo['updateSavedBlock']>[2] = { updated_at: at };
  if (input.name !== undefined) change.name = checkName(input.name);
  if (input.content === undefined || input.content === null) {
    await repo.updateSavedBlock(teamId, block.id, change);
    return { object: 'saved_block', id: block.id };
  }
  const content = await checkSavedContent(block.kind, input.content);
  change.content_json = JSON.stringify(content);
  const lookup = overlaid(savedBlockLookup(repo, teamId), { id: block.id, kind: block.kind, content });
  const rewrites = await rewritesFor(repo, teamId, block.id, lookup, at);
  const lost = await inWriteTransaction(deps.db, async (trx) => {
    const inTrx = templatesRepo(trx);
    await inTrx.updateSavedBlock(teamId, block.id, change);
    const missed: string[] = [];
    for (const r of rewrites) if (!(await inTrx.updateVersionIf(teamId, r.version.id, r.version.updated_at, r.change))) missed.push(r.version.id);
    return missed;
  });
  const retried = await retryLost(repo, teamId, block.id, lost, at);
  deps.logger.info({ teamId, savedBlockId: block.id, versions: rewrites.length, retried }, 'saved block updated');
  return { object: 'saved_block', id: block.id };
}

interface Rewrite {
  version: TemplateVersionRow;
  change: VersionContent & { updated_at: string };
}

/**
 * Each live template version (published or open draft) that uses the block, compiled again with
 * the lookup's content; nothing is written. A version the new content would break refuses the edit.
 */
async function rewritesFor(repo: TemplatesRepo, teamId: string, blockId: string, lookup: SavedBlockLookup, at: string): Promise<Rewrite[]> {
  const rewrites: Rewrite[] = [];
  for (const version of await repo.versionsNaming(teamId, blockId)) {
    const layout = JSON.parse(version.layout_json ?? 'null') as unknown;
    if (!(await withSavedBlocks(layout, lookup)).used.has(blockId)) continue;
    try {
      const content = await buildContent({ layout }, contentOf(version), at, { savedBlocks: lookup, keepUnused: true });
      rewrites.push({ version, change: { ...content, updated_at: later(version.updated_at, at) } });
    } catch (err) {
      if (!(err instanceof ServiceError) || err.statusCode !== 422) throw err;
      const template = await repo.byId(teamId, version.template_id);
      const which = `Template "${template?.name ?? version.template_id}" (version ${version.number})`;
      throw validationError(422, 'content', `${which} cannot take this content: ${err.message}`);
    }
  }
  return rewrites;
}

/** Versions a template edit changed between the read and the write, rewritten from their new content. */
async function retryLost(repo: TemplatesRepo, teamId: string, blockId: string, lost: string[], at: string): Promise<number> {
  let pending = lost;
  for (let tries = 0; pending.length > 0 && tries < REWRITE_TRIES; tries++) {
    // The block is saved by now: a draft since edited to refuse its content keeps what it has.
    const rewrites = (await rewritesFor(repo, teamId, blockId, savedBlockLookup(repo, teamId), at).catch(() => []))
      .filter((r) => pending.includes(r.version.id));
    const missed: string[] = [];
    for (const r of rewrites) if (!(await repo.updateVersionIf(teamId, r.version.id, r.version.updated_at, r.change))) missed.push(r.version.id);
    pending = missed;
  }
  return lost.length - pending.length;
}

/** The team's saved blocks, with one block's content as it is about to be saved. */
const overlaid = (lookup: SavedBlockLookup, block: { id: string; kind: SavedBlockKind; content: Record<string, unknown> }): SavedBlockLookup =>
  async (ids) => new Map([...(await lookup(ids.filter((id) => id !== block.id))), ...(ids.includes(block.id) ? [[block.id, block] as const] : [])]);

/** A time after `previous`: the compiled-version cache is keyed by `updated_at`, so a rewrite must move it. */
function later(previous: string, at: string): string {
  return at > previous ? at : new Date(Date.parse(previous) + 1).toISOString();
}

export const savedBlockView = (row: SavedBlockRow): SavedBlockView => ({
  object: 'saved_block', id: row.id, name: row.name, kind: row.kind, content: savedContentOf(row).content,
  created_at: row.created_at, updated_at: row.updated_at,
});

function checkName(name: unknown): string {
  if (name === undefined || name === null) throw missingField('name');
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (trimmed === '' || trimmed.length > SAVED_BLOCK_NAME_MAX) {
    throw validationError(422, 'name', `A saved block's name is 1-${SAVED_BLOCK_NAME_MAX} characters.`);
  }
  return trimmed;
}

function checkKind(kind: unknown): SavedBlockKind {
  if (kind === undefined || kind === null) throw missingField('kind');
  if (!(savedBlockKinds as readonly unknown[]).includes(kind)) throw validationError(422, 'kind', '`kind` is `block` or `section`.');
  return kind as SavedBlockKind;
}
