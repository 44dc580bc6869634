// The TLS-RPT area's public face (sending tier): daily reports (RFC 8460) of the outbound role's
// session counts under recipient domains' MTA-STS policies.
export * from './report.js';
export * from './rua.js';
export * from './send.js';
