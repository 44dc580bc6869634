// The broadcasts area's public face (campaigns tier): the API service, the fan-out as durable
// work, the release of scheduled broadcasts, the seam templates plug into, and the
// engagement lists (opened, clicked, complained, unsubscribed recipients; clicked links).
export { broadcastsService, recipientTypes, type BroadcastsDeps, type BroadcastsService, type ChecklistView, type ContentChecksView, type RecipientItem, type RecipientType } from './service.js';
export { broadcastFanOut, FAN_OUT_KIND, type FanOutDeps } from './fan-out.js';
export { releaseDueBroadcasts, type ReleaseBroadcastsDeps } from './release.js';
export { noTemplates, type PublishedContent, type TemplateSource } from './ports.js';
export type { ClickedLink } from './engagement.js';
export type { GateCheck, GateCheckName } from './gate.js';
export type { BroadcastFields, CreateBroadcastInput, SendBroadcastInput } from './input.js';
export type { BroadcastListItem, BroadcastView } from './view.js';
export type { CheckName, CheckStatus, ContentCheck } from '../content-checks/index.js';
export { publishedTemplates } from './templates.js';
