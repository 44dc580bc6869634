// Open and click tracking (sending tier): the tokens tracking links carry, the rewrite of one
// recipient's HTML at compose time, the machine-hit rules, and the hits' recording (events through
// the outbox, the email's last_event).
export { clickPath, listUnsubscribeUrls, openPath, rewriteHtml, trackableUrl, type TrackingPlan } from './rewrite.js';
export { MAX_TRACKED_URL_BYTES, trackingTokens, type TokenKind, type TrackingClaim, type TrackingTokens } from './tokens.js';
export { machineReason, type HitFacts, type MachineReason } from './machine.js';
export { DEDUPE_MS, trackingService, type HitClient, type TrackingDeps, type TrackingService } from './service.js';
