// What the webhooks area needs from outbound HTTP, declared by shape: net/webhook-sender.ts and
// net/url-policy.ts satisfy these, and bin/ hands them in. Core never opens a connection itself.

// The sender's shapes are net's own, named here by type only (core never imports net's values).
export type { Sender, SendOutcome } from '../../net/webhook-sender.js';

/** Judges an endpoint URL before it is saved: its canonical form, or why it is refused. */
export type EndpointUrlCheck = (raw: string) => Promise<{ ok: true; href: string } | { ok: false; reason: string }>;
