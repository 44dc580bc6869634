// The receiving area's public face: other rooms and areas import it from here alone.
// Receiving: RCPT routing, ingest, the receiving API, and the reports (DSN, ARF) that come back.
export * from './email-feedback.js';
export * from './feedback.js';
export * from './ingest.js';
export * from './ports.js';
export * from './reports.js';
export * from './routing.js';
export * from './service.js';
export * from './views.js';
