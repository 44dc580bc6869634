// storage/repos: One repository per area, each with its table types beside it. SQL lives here and nowhere else.
// Other rooms import this kind from here alone.
export * from './api-keys.js';
export * from './brand-kit-uploads.js';
export * from './domains-tables.js';
export * from './domains.js';
export * from './emails-queue.js';
export * from './emails-share.js';
export * from './emails-tables.js';
export * from './emails.js';
export * from './events.js';
export * from './facts.js';
export * from './idempotency.js';
export * from './metrics-tables.js';
export * from './metrics.js';
export * from './received-tables.js';
export * from './received.js';
export * from './request-logs.js';
export * from './retention.js';
export * from './suppressions-tables.js';
export * from './suppressions.js';
export * from './team-members.js';
export * from './team-tables.js';
export * from './team-usage.js';
export * from './teams.js';
export * from './webhooks-tables.js';
export * from './webhooks.js';
export * from './work.js';
