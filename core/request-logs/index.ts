// The request-logs area's public face: other rooms and areas import it from here alone.
// Request logs: redaction, the batched writer, the API service and retention.
export * from './redact.js';
export * from './retention.js';
export * from './service.js';
export * from './writer.js';
