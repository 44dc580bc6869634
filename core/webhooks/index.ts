// The webhooks area: endpoint management (service), the dispatcher that delivers outbox events,
// and the pieces both use (signing, the retry schedule). Outbound HTTP (the sender, the URL policy)
// lives in net/ and is handed in through ports.ts.
export { webhooksService, ROTATION_OVERLAP_MS, type WebhooksService, type WebhookInput } from './service.js';
export { webhookDispatcher, type WebhookDispatcher, type RunSummary } from './dispatcher.js';
export type { EndpointUrlCheck, Sender, SendOutcome } from './ports.js';
export { retryDelaysMs } from './retry.js';
export type { AttemptView, MessageItem, MessageView, WebhookListItem, WebhookView } from './views.js';
export * from './fan-out.js';
export * from './retention.js';
