// The api-keys area's public face: other rooms and areas import it from here alone.
// API keys: tokens, authentication (with its in-memory key cache) and the API service.
export * from './auth.js';
export * from './key-cache.js';
export * from './service.js';
