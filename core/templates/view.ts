import type { TemplateRow, TemplateVersionRow } from '../../storage/repos/index.js';
import type { BrandOverrides } from './brand.js';
import type { TemplateVariable } from './variables.js';

// The wire shapes: what the hosted API's clients read (their Template type) plus the visual
// layout, the starter it began from and the brand overrides.

export type TemplateStatus = 'draft' | 'published';

export interface TemplateListItem {
  id: string;
  name: string;
  alias: string | null;
  status: TemplateStatus;
  published_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface TemplateView extends TemplateListItem {
  object: 'template';
  /** The current version: the open draft when there is one, else the published one. */
  current_version_id: string;
  current_version_number: number;
  /** True when the current version is a draft not yet published. */
  has_unpublished_versions: boolean;
  from: string | null;
  subject: string | null;
  reply_to: string[] | null;
  /** As given, or compiled from `layout` (placeholders and brand tokens still in place). */
  html: string;
  text: string | null;
  variables: TemplateVariable[];
  /** A visual template's layout; null for one given as HTML. */
  layout: unknown;
  starter: string | null;
  preview_text: string | null;
  brand_overrides: BrandOverrides | null;
}

export const statusOf = (row: TemplateRow): TemplateStatus => (row.published_version_id ? 'published' : 'draft');

export const templateListItem = (row: TemplateRow): TemplateListItem => ({
  id: row.id, name: row.name, alias: row.alias, status: statusOf(row), published_at: row.published_at, created_at: row.created_at, updated_at: row.updated_at,
});

export function templateView(row: TemplateRow, version: TemplateVersionRow): TemplateView {
  return {
    object: 'template',
    ...templateListItem(row),
    current_version_id: version.id,
    current_version_number: version.number,
    has_unpublished_versions: row.current_version_id !== row.published_version_id,
    from: version.from_header,
    subject: version.subject,
    reply_to: version.reply_to_json ? JSON.parse(version.reply_to_json) as string[] : null,
    html: version.html,
    text: version.text,
    variables: JSON.parse(version.variables_json) as TemplateVariable[],
    layout: version.layout_json ? JSON.parse(version.layout_json) : null,
    starter: version.starter,
    preview_text: version.preview_text,
    brand_overrides: row.brand_overrides ? JSON.parse(row.brand_overrides) as BrandOverrides : null,
  };
}
