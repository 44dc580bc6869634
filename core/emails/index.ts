// The emails area's public face: other rooms and areas import it from here alone.
// Sending: the emails service, the delivery recorder, signed return paths, share links.
export * from './ambiguous.js';
export * from './campaign.js';
export * from './delivery.js';
export * from './release.js';
export * from './envelope.js';
export * from './outcomes.js';
export * from './ports.js';
export * from './return-path.js';
export * from './service.js';
export * from './share.js';
export * from './trace.js';
export * from './retry.js';
export * from './queue-admin.js';
export * from './queue-view.js';
export * from './view.js';
export type { AttachmentInput, SendEmailInput } from './types.js';
export { addressKey, parseMailboxes, type Mailbox } from './addresses.js';
export { onboardingAddress } from './onboarding.js';
