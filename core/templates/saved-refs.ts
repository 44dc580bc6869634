import type { SavedBlockRow, TemplatesRepo } from '../../storage/repos/index.js';
import { ServiceError, validationError } from '../errors.js';
import { blockKinds } from './blocks.js';
import { compileLayout, parseLayout } from './visual.js';

// How a layout uses a saved block: a section `{saved_block_id}` (a saved section) or a block
// `{saved_block_id}` in a column (a saved block). When the layout is saved, the saved block's
// content is copied in beside the reference, so a version renders from its own layout alone; an
// edit of the saved block rewrites the copies (see saved-blocks.ts). A reference to a saved block
// that is gone keeps the copy it carries and loses the reference.

export type SavedBlockKind = 'block' | 'section';
export const savedBlockKinds: readonly SavedBlockKind[] = ['block', 'section'];

export interface SavedContent {
  id: string;
  kind: SavedBlockKind;
  content: Record<string, unknown>;
}

/** The team's live saved blocks among these ids (lower-case), by id. */
export type SavedBlockLookup = (ids: readonly string[]) => Promise<ReadonlyMap<string, SavedContent>>;

export const savedContentOf = (row: SavedBlockRow): SavedContent => ({
  id: row.id, kind: row.kind, content: JSON.parse(row.content_json) as Record<string, unknown>,
});

/** The lookup a template save uses: the team's live saved blocks. */
export const savedBlockLookup = (repo: TemplatesRepo, teamId: string): SavedBlockLookup => async (ids) =>
  new Map((await repo.savedBlocks(teamId, ids)).map((row) => [row.id, savedContentOf(row)]));

type Item = Record<string, unknown>;
const isObject = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);
const refOf = (item: unknown, path: string): string | undefined => {
  if (!isObject(item) || item.saved_block_id === undefined || item.saved_block_id === null) return undefined;
  if (typeof item.saved_block_id !== 'string') throw validationError(422, `${path}.saved_block_id`, '`saved_block_id` is the id of a saved block.');
  return item.saved_block_id.toLowerCase();
};

/** Every reference of a raw layout, by path (sections, then the blocks of unreferenced sections). */
function referencesOf(raw: Item): Map<string, string> {
  const refs = new Map<string, string>();
  (raw.sections as unknown[]).forEach((section, s) => {
    const path = `layout.sections[${s}]`;
    const own = refOf(section, path);
    if (own) return refs.set(path, own);
    if (!isObject(section) || !Array.isArray(section.columns)) return;
    section.columns.forEach((column: unknown, c: number) => {
      if (!Array.isArray(column)) return;
      column.forEach((block: unknown, b: number) => {
        const at = `${path}.columns[${c}][${b}]`;
        const id = refOf(block, at);
        if (id) refs.set(at, id);
      });
    });
  });
  return refs;
}

/**
 * The raw layout with each reference's current content copied in (the reference and the item's
 * own `show_when` kept), and the ids it uses. Shapes it does not know are left for parseLayout.
 */
export async function withSavedBlocks(raw: unknown, lookup: SavedBlockLookup): Promise<{ layout: unknown; used: Set<string> }> {
  if (!isObject(raw) || !Array.isArray(raw.sections)) return { layout: raw, used: new Set() };
  const refs = referencesOf(raw);
  if (refs.size === 0) return { layout: raw, used: new Set() };
  const saved = await lookup([...new Set(refs.values())]);
  const used = new Set<string>();
  const resolve = (item: Item, path: string, kind: SavedBlockKind): Item => {
    const id = refs.get(path)!;
    const found = saved.get(id);
    if (!found) {
      const { saved_block_id: _gone, ...copy } = item;
      if (kind === 'section' ? Array.isArray(copy.columns) : typeof copy.type === 'string') return copy;
      throw validationError(422, `${path}.saved_block_id`, `No saved block has the id ${JSON.stringify(id)}.`);
    }
    if (found.kind !== kind) throw validationError(422, `${path}.saved_block_id`, `Saved block ${id} is a ${found.kind}, not a ${kind}.`);
    used.add(id);
    return { ...found.content, ...(item.show_when !== undefined ? { show_when: item.show_when } : {}), saved_block_id: id };
  };
  const sections = (raw.sections as unknown[]).map((section, s) => {
    const path = `layout.sections[${s}]`;
    if (refs.has(path)) return resolve(section as Item, path, 'section');
    if (!isObject(section) || !Array.isArray(section.columns)) return section;
    const columns = section.columns.map((column: unknown, c: number) => (!Array.isArray(column) ? column
      : column.map((block: unknown, b: number) => {
        const at = `${path}.columns[${c}][${b}]`;
        return refs.has(at) ? resolve(block as Item, at, 'block') : block;
      })));
    return { ...section, columns };
  });
  return { layout: { ...raw, sections }, used };
}

/** A saved block's content checked as it would be drawn in a layout (compiled once, then dropped). */
export async function checkSavedContent(kind: SavedBlockKind, content: unknown): Promise<Item> {
  if (!isObject(content)) {
    throw validationError(422, 'content', `\`content\` is a ${kind === 'block' ? 'block `{type, …}`' : 'section `{columns: [[block, …]]}`'}.`);
  }
  const inner = kind === 'section' && Array.isArray(content.columns) ? content.columns.flat() : [];
  if (content.saved_block_id !== undefined || inner.some((b) => isObject(b) && b.saved_block_id !== undefined)) {
    throw validationError(422, 'content', 'A saved block holds its own content, not a reference to another.');
  }
  if (kind === 'block' && (content.type === 'preheader' || !(blockKinds as readonly unknown[]).includes(content.type))) {
    throw validationError(422, 'content.type', `A saved block's type is one of ${blockKinds.filter((k) => k !== 'preheader').join(', ')}.`);
  }
  if (kind === 'section' && inner.some((b) => isObject(b) && b.type === 'preheader')) {
    throw validationError(422, 'content', 'A saved section holds no preheader (it is the first block of one email).');
  }
  const prefix = kind === 'block' ? 'layout.sections[0].columns[0][0]' : 'layout.sections[0]';
  try {
    await compileLayout(parseLayout({ sections: [kind === 'block' ? { columns: [[content]] } : content] }));
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    const at = (path: string) => (path.startsWith(prefix) ? `content${path.slice(prefix.length)}` : path.replace(/^layout/, 'content'));
    const errors = err.options.errors?.map((e) => ({ ...e, path: at(e.path) }));
    throw new ServiceError(err.statusCode, err.errorName, err.message, { ...err.options, errors });
  }
  return content;
}
