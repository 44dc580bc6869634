// The webhooks area: endpoint management (service), the dispatcher that delivers outbox events,
// and the pieces both use (URL policy, signing, the retry schedule).
export { webhooksService, ROTATION_OVERLAP_MS, type WebhooksService, type WebhookInput } from './service.js';
export { createDispatcher, type WebhookDispatcher, type RunSummary } from './dispatcher.js';
export { createSender, USER_AGENT, type Sender } from './sender.js';
export { retryDelaysMs } from './retry.js';
export { checkEndpointUrl, judgeAddress } from './url-policy.js';
export type { AttemptView, MessageView, WebhookListItem, WebhookView } from './views.js';
