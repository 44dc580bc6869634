import type { Db } from '../../storage/sql/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import { templatesRepo, type TemplateRow, type TemplatesRepo, type TemplateVersionRow } from '../../storage/repos/index.js';
import { isoNow, type Clock } from '../clock.js';
import { invalidParameter, missingField, notFound, validationError } from '../errors.js';
import { looksLikeId, newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { listOf, parsePageQuery, type ListEnvelope, type RawPageQuery } from '../pagination.js';
import { parseBrandOverrides } from './brand.js';
import { buildContent, changesContent, contentOf, type ContentInput, type VersionContent } from './content.js';
import { savedBlockLookup } from './saved-refs.js';
import { templateListItem, templateView, type TemplateListItem, type TemplateView } from './view.js';

export const TEMPLATE_NAME_MAX = 200;
export const ALIAS_MAX = 63;

export interface CreateTemplateInput extends ContentInput {
  name?: string;
  alias?: string | null;
  brand_overrides?: unknown;
}

export interface UpdateTemplateInput extends Omit<CreateTemplateInput, 'starter'> {
  /** Accepted when equal to the path id. */
  id?: string;
}

type Ref = { object: 'template'; id: string };

export interface TemplatesDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
}

export function templatesService(deps: TemplatesDeps) {
  const repo = templatesRepo(deps.db);
  return {
    create: (teamId: string, input: CreateTemplateInput): Promise<Ref> => createTemplate(deps, teamId, input),

    async list(teamId: string, query: RawPageQuery): Promise<ListEnvelope<TemplateListItem>> {
      const page = await repo.list(teamId, parsePageQuery(query));
      return listOf(page.data.map(templateListItem), page.has_more);
    },

    async get(teamId: string, id: string): Promise<TemplateView> {
      const template = await findTemplate(repo, teamId, id);
      return templateView(template, await versionOf(repo, template, template.current_version_id));
    },

    /** Name, alias and overrides change in place; content edits the open draft or opens the next one. */
    update: (teamId: string, id: string, input: UpdateTemplateInput): Promise<Ref> => updateTemplate(deps, teamId, id, input),

    /** The current version becomes the one sends use. Publishing what is already published changes nothing. */
    async publish(teamId: string, id: string): Promise<Ref> {
      const template = await findTemplate(repo, teamId, id);
      if (template.published_version_id === template.current_version_id) return { object: 'template', id: template.id };
      const at = isoNow(deps.clock);
      await inWriteTransaction(deps.db, async (trx) => {
        await templatesRepo(trx).updateVersion(teamId, template.current_version_id, { published_at: at, updated_at: at });
        await templatesRepo(trx).update(teamId, template.id, { published_version_id: template.current_version_id, published_at: at, updated_at: at });
      });
      deps.logger.info({ teamId, templateId: template.id, versionId: template.current_version_id }, 'template published');
      return { object: 'template', id: template.id };
    },

    /** A new draft template with the current version's content, named "<name> (copy)" and without an alias. */
    duplicate: (teamId: string, id: string): Promise<Ref> => duplicateTemplate(deps, teamId, id),

    /** Soft: gone for every read and send, its alias free again; sent emails keep naming its version. */
    async remove(teamId: string, id: string): Promise<Ref & { deleted: true }> {
      const template = await findTemplate(repo, teamId, id);
      if (!(await inWriteTransaction(deps.db, (trx) => templatesRepo(trx).markDeleted(teamId, template.id, isoNow(deps.clock))))) throw notFound('Template');
      deps.logger.info({ teamId, templateId: template.id }, 'template deleted');
      return { object: 'template', id: template.id, deleted: true };
    },
  };
}

const newVersion = (template: TemplateRow, number: number, content: VersionContent, at: string): TemplateVersionRow => ({
  id: newId(), template_id: template.id, team_id: template.team_id, number, ...content, created_at: at, updated_at: at, published_at: null,
});

async function createTemplate(deps: TemplatesDeps, teamId: string, input: CreateTemplateInput): Promise<Ref> {
  const name = checkName(input.name);
  const alias = checkAlias(input.alias);
  if (input.html !== undefined && input.html !== null && input.starter) throw validationError(422, 'starter', 'Send `html` or `starter`, not both.');
  const at = isoNow(deps.clock);
  const content = await buildContent(input, null, at, { savedBlocks: savedBlockLookup(templatesRepo(deps.db), teamId) });
  const id = newId();
  const template: TemplateRow = {
    id, team_id: teamId, name, alias, current_version_id: '', published_version_id: null, published_at: null,
    brand_overrides: overridesJson(input.brand_overrides), created_at: at, updated_at: at, deleted_at: null,
  };
  const version = newVersion(template, 1, content, at);
  template.current_version_id = version.id;
  await inWriteTransaction(deps.db, async (trx) => {
    if (!(await templatesRepo(trx).insertIfAbsent(template))) throw duplicateAlias(alias!);
    await templatesRepo(trx).insertVersion(version);
  });
  deps.logger.info({ teamId, templateId: id, versionId: version.id }, 'template created');
  return { object: 'template', id };
}

async function updateTemplate(deps: TemplatesDeps, teamId: string, id: string, input: UpdateTemplateInput): Promise<Ref> {
  const repo = templatesRepo(deps.db);
  const template = await findTemplate(repo, teamId, id);
  if (input.id !== undefined && input.id.toLowerCase() !== template.id) throw invalidParameter('id', 'The `id` in the body must be the template\'s own id.');
  const at = isoNow(deps.clock);
  const change: Parameters<TemplatesRepo['update']>[2] = { updated_at: at };
  if (input.name !== undefined) change.name = checkName(input.name);
  if (input.alias !== undefined) change.alias = checkAlias(input.alias);
  if (input.brand_overrides !== undefined) change.brand_overrides = overridesJson(input.brand_overrides);
  const current = await versionOf(repo, template, template.current_version_id);
  const content = changesContent(input) ? await buildContent(input, current, at, { savedBlocks: savedBlockLookup(repo, teamId) }) : undefined;
  await inWriteTransaction(deps.db, async (trx) => {
    const inTrx = templatesRepo(trx);
    if (change.alias && change.alias !== template.alias) {
      const other = await inTrx.byAlias(teamId, change.alias);
      if (other && other.id !== template.id) throw duplicateAlias(change.alias);
    }
    if (content && template.current_version_id === template.published_version_id) {
      const next = newVersion(template, current.number + 1, content, at);
      await inTrx.insertVersion(next);
      change.current_version_id = next.id;
    } else if (content) {
      await inTrx.updateVersion(teamId, current.id, { ...content, updated_at: at });
    }
    await inTrx.update(teamId, template.id, change);
  });
  return { object: 'template', id: template.id };
}

async function duplicateTemplate(deps: TemplatesDeps, teamId: string, id: string): Promise<Ref> {
  const repo = templatesRepo(deps.db);
  const source = await findTemplate(repo, teamId, id);
  const version = await versionOf(repo, source, source.current_version_id);
  const at = isoNow(deps.clock);
  const template: TemplateRow = {
    ...source, id: newId(), name: `${source.name} (copy)`.slice(0, TEMPLATE_NAME_MAX), alias: null, current_version_id: '',
    published_version_id: null, published_at: null, created_at: at, updated_at: at, deleted_at: null,
  };
  const copy = newVersion(template, 1, contentOf(version), at);
  template.current_version_id = copy.id;
  await inWriteTransaction(deps.db, async (trx) => {
    await templatesRepo(trx).insertIfAbsent(template);
    await templatesRepo(trx).insertVersion(copy);
  });
  return { object: 'template', id: template.id };
}

export type TemplatesService = ReturnType<typeof templatesService>;

/** A live template of the team by its id or its alias. */
export async function findTemplate(repo: TemplatesRepo, teamId: string, ref: string): Promise<TemplateRow> {
  const row = typeof ref !== 'string' ? undefined
    : looksLikeId(ref) ? await repo.byId(teamId, ref.toLowerCase()) : await repo.byAlias(teamId, ref.toLowerCase());
  if (!row) throw notFound('Template');
  return row;
}

export async function versionOf(repo: TemplatesRepo, template: TemplateRow, versionId: string): Promise<TemplateVersionRow> {
  const version = await repo.version(template.team_id, versionId);
  if (!version) throw notFound('Template version');
  return version;
}

const uuidShape = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/;
const aliasPattern = /^[a-z0-9][a-z0-9_-]*$/;

function checkAlias(alias: string | null | undefined): string | null {
  if (alias === undefined || alias === null) return null;
  if (typeof alias !== 'string' || !aliasPattern.test(alias) || alias.length > ALIAS_MAX) {
    throw validationError(422, 'alias', `An alias is lower-case letters, digits, \`-\` and \`_\`, starts with a letter or digit, and is at most ${ALIAS_MAX} characters.`);
  }
  if (uuidShape.test(alias)) throw validationError(422, 'alias', 'An alias may not look like a template id.');
  return alias;
}

function checkName(name: string | undefined): string {
  if (name === undefined || name === null) throw missingField('name');
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (trimmed === '' || trimmed.length > TEMPLATE_NAME_MAX) throw validationError(422, 'name', `A template name is 1-${TEMPLATE_NAME_MAX} characters.`);
  return trimmed;
}

const overridesJson = (raw: unknown) => {
  const parsed = parseBrandOverrides(raw);
  return parsed && Object.keys(parsed).length ? JSON.stringify(parsed) : null;
};

const duplicateAlias = (alias: string) => invalidParameter('alias', `A template with the alias "${alias}" already exists.`);
