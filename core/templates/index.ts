// The templates area's public face (content tier): templates and their versions (the API
// service), and what sending areas use — a template resolved and rendered for a send, previews,
// checks, and a per-contact renderer for campaigns and flows.
export { templatesService, findTemplate, ALIAS_MAX, TEMPLATE_NAME_MAX, type CreateTemplateInput, type TemplatesDeps, type TemplatesService, type UpdateTemplateInput } from './service.js';
export { templateSends, type ChecksView, type ContactRenderer, type PreviewInput, type PreviewView, type ResolvedTemplate, type TemplateRef, type TemplateSends } from './sends.js';
export type { TemplateListItem, TemplateStatus, TemplateView } from './view.js';
export type { CheckResult, CheckStatus } from './checks.js';
export type { AudienceFacts, RenderContact, ShowWhen } from './show-when.js';
export { VARIABLES_MAX, variableTypes, type TemplateVariable, type VariableType } from './variables.js';
export { starters, type Starter } from './starters.js';
export { savedBlocksService, SAVED_BLOCK_NAME_MAX, type SavedBlockInput, type SavedBlocksService, type SavedBlockView } from './saved-blocks.js';
export { blockKinds, type BlockKind } from './blocks.js';
export { REPEAT_MAX } from './render.js';
