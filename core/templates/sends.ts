import type { Db } from '../../storage/sql/index.js';
import { teamsRepo, templatesRepo, type TemplateRow, type TemplatesRepo, type TemplateVersionRow } from '../../storage/repos/index.js';
import { invalidParameter, missingField, ServiceError, validationError } from '../errors.js';
import { brandValues } from './brand.js';
import { runChecks, type CheckResult } from './checks.js';
import { compiledVersion, renderVersion, type CompiledVersion, type RenderedContent } from './compiled.js';
import type { AudienceFacts, RenderContact } from './show-when.js';
import { findTemplate, versionOf } from './service.js';
import type { BrandOverrides } from './brand.js';
import { valuesForSend } from './variables.js';

// Templates as sends use them: the published version (a draft for tests) rendered with the
// request's variables and the team's brand kit. POST /emails, previews and tests render without
// a contact (every block shows, no repeats); campaign and flow senders render per contact.

export interface TemplateRef {
  id?: unknown;
  variables?: unknown;
}

/** A template rendered for one send: what the emails area puts in the message. */
export interface ResolvedTemplate extends RenderedContent {
  templateId: string;
  versionId: string;
  from: string | null;
  replyTo: string[] | null;
}

export interface PreviewInput {
  variables?: unknown;
  /** A version of the template (default: its current version). */
  version_id?: string;
  /** Trigger event data for `{{{event.…}}}` slots. */
  event?: unknown;
}

export interface PreviewView {
  object: 'template_preview';
  template_id: string;
  version_id: string;
  from: string | null;
  subject: string | null;
  preview_text: string | null;
  html: string;
  text: string | null;
  /** Declared variables with neither a value nor a fallback (rendered empty). */
  missing_variables: string[];
}

export interface ChecksView {
  object: 'template_checks';
  template_id: string;
  version_id: string;
  checks: CheckResult[];
}

/** A published version ready to render per contact (campaigns, flows). */
export interface ContactRenderer {
  templateId: string;
  versionId: string;
  from: string | null;
  replyTo: string[] | null;
  render(input: { variables?: unknown; contact: RenderContact | null; audience: AudienceFacts | null; event?: unknown }): RenderedContent;
}

export function templateSends(deps: { db: Db }) {
  const brandOf = (template: TemplateRow) => brandFor(deps.db, template);
  const published = (teamId: string, ref: TemplateRef, draft: boolean) => sendVersion(templatesRepo(deps.db), teamId, ref, draft);
  const previewed = (teamId: string, id: string, input: PreviewInput) => previewOf(deps.db, teamId, id, input);

  return {
    /** POST /emails with `template`: the published version (`draft`: the current one, for tests) rendered once. */
    async resolve(teamId: string, ref: TemplateRef, draft = false): Promise<ResolvedTemplate> {
      const { template, version: row } = await published(teamId, ref, draft);
      const version = compiledVersion(row);
      const { values } = valuesForSend(version.variables, ref.variables);
      const content = renderVersion(version, { variables: values, brand: await brandOf(template), perContact: false });
      return { ...content, templateId: template.id, versionId: version.id, from: version.from, replyTo: version.replyTo };
    },

    async preview(teamId: string, id: string, input: PreviewInput): Promise<PreviewView> {
      const { template, version, content, missing } = await previewed(teamId, id, input);
      return {
        object: 'template_preview', template_id: template.id, version_id: version.id, from: version.from, subject: content.subject,
        preview_text: version.previewText, html: content.html, text: content.text, missing_variables: missing,
      };
    },

    async checks(teamId: string, id: string, input: PreviewInput): Promise<ChecksView> {
      const { template, version, content, missing } = await previewed(teamId, id, input);
      const checks = await runChecks({ version, content, missing, imageBytes: (ids) => imageBytes(deps.db, teamId, ids) });
      return { object: 'template_checks', template_id: template.id, version_id: version.id, checks };
    },

    /** The published version, for a campaign or flow that renders it once per contact. */
    async forContacts(teamId: string, ref: string): Promise<ContactRenderer> {
      const { template, version: row } = await published(teamId, { id: ref }, false);
      const version: CompiledVersion = compiledVersion(row);
      const brand = await brandOf(template);
      return {
        templateId: template.id, versionId: version.id, from: version.from, replyTo: version.replyTo,
        render: ({ variables, contact, audience, event }) => renderVersion(version, {
          variables: valuesForSend(version.variables, variables).values, brand, contact, audience, event, perContact: true,
        }),
      };
    },
  };
}

export type TemplateSends = ReturnType<typeof templateSends>;

/** Bytes of the team's uploaded brand kit images among these upload ids. */
async function imageBytes(db: Db, teamId: string, ids: readonly string[]): Promise<number> {
  return templatesRepo(db).uploadBytes(teamId, ids);
}

async function brandFor(db: Db, template: TemplateRow) {
  const team = await teamsRepo(db).byId(template.team_id);
  return brandValues(team?.brand_kit ?? null, template.brand_overrides ? JSON.parse(template.brand_overrides) as BrandOverrides : null);
}

/** The version a send uses: the published one (`draft`: the current one, for a test send). */
async function sendVersion(repo: TemplatesRepo, teamId: string, ref: TemplateRef, draft: boolean): Promise<{ template: TemplateRow; version: TemplateVersionRow }> {
  if (ref === null || typeof ref !== 'object' || ref.id === undefined || ref.id === null) throw missingField('template.id');
  if (typeof ref.id !== 'string') throw validationError(422, 'template.id', '`template.id` is a template id or alias.');
  let template: TemplateRow;
  try {
    template = await findTemplate(repo, teamId, ref.id);
  } catch (err) {
    // A send body naming no template is a bad field; a test send names it in its path (404).
    if (err instanceof ServiceError && err.statusCode === 404 && !draft) throw validationError(422, 'template.id', `Template ${JSON.stringify(ref.id)} was not found.`);
    throw err;
  }
  const versionId = draft ? template.current_version_id : template.published_version_id;
  if (!versionId) throw invalidParameter('template.id', `Template ${JSON.stringify(ref.id)} is a draft: publish it before sending with it.`);
  return { template, version: await versionOf(repo, template, versionId) };
}

/** A version (default the current one) rendered as a preview: every block shown, no repeat drawn. */
async function previewOf(db: Db, teamId: string, id: string, input: PreviewInput) {
  const repo = templatesRepo(db);
  const template = await findTemplate(repo, teamId, id);
  const versionId = input.version_id ?? template.current_version_id;
  const row = typeof versionId === 'string' ? await repo.version(teamId, versionId.toLowerCase()) : undefined;
  if (!row || row.template_id !== template.id) throw validationError(422, 'version_id', 'No such version of this template.');
  const version = compiledVersion(row);
  const { values, missing } = valuesForSend(version.variables, input.variables, true);
  const content = renderVersion(version, { variables: values, brand: await brandFor(db, template), event: input.event, perContact: false });
  return { template, version, content, missing };
}
