// The broadcasts area's public face (campaigns tier): the API service, the fan-out as durable
// work, the release of scheduled broadcasts, and the seams templates and tracking plug into.
export { broadcastsService, recipientTypes, type BroadcastsDeps, type BroadcastsService, type ChecklistView, type ContentChecksView, type RecipientItem, type RecipientType } from './service.js';
export { broadcastFanOut, FAN_OUT_KIND, type FanOutDeps } from './fan-out.js';
export { releaseDueBroadcasts, type ReleaseBroadcastsDeps } from './release.js';
export { noClicks, noTemplates, type ClickedLink, type ClickedLinksSource, type PublishedContent, type TemplateSource } from './ports.js';
export type { GateCheck, GateCheckName } from './gate.js';
export type { BroadcastFields, CreateBroadcastInput, SendBroadcastInput } from './input.js';
export type { BroadcastListItem, BroadcastView } from './view.js';
export type { CheckName, CheckStatus, ContentCheck } from '../content-checks/index.js';
export { publishedTemplates } from './templates.js';
