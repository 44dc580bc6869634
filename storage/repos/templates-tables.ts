// Row types of the template tables (migration 019). Kept beside the repo; tables.ts lists them.

export interface TemplateRow {
  id: string;
  team_id: string;
  name: string;
  /** Lower-case; unique among the team's live templates. */
  alias: string | null;
  current_version_id: string;
  /** The version sends use; null until the first publish. */
  published_version_id: string | null;
  published_at: string | null;
  /** JSON object of pinned brand fields (a null value: the plain default); null: follow the brand. */
  brand_overrides: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface TemplateVersionRow {
  id: string;
  template_id: string;
  team_id: string;
  /** 1, 2, … in the order versions were opened. */
  number: number;
  from_header: string | null;
  subject: string | null;
  reply_to_json: string | null;
  preview_text: string | null;
  /** The HTML sends render: as given, or compiled from `layout_json` for a visual template. */
  html: string;
  /** As given; for a visual template, made from the compiled HTML. */
  text: string | null;
  /** JSON array of the declared variables. */
  variables_json: string;
  /** JSON of the visual layout; null for a template given as HTML. */
  layout_json: string | null;
  starter: string | null;
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

/** A reusable block or section; templates hold references to it (`saved_block_id`). */
export interface SavedBlockRow {
  id: string;
  team_id: string;
  name: string;
  kind: 'block' | 'section';
  content_json: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}
