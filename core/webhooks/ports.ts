// What the webhooks area needs from outbound HTTP, declared by shape: net/webhook-sender.ts and
// net/url-policy.ts satisfy these, and bin/ hands them in. Core never opens a connection itself.

export interface SendOutcome {
  /** null when no HTTP answer came (refused address, connection error, timeout). */
  statusCode: number | null;
  /** The receiver answered `webhook-delivery: abort-message`: stop retrying this message. */
  abort: boolean;
  response: string | null;
  error: string | null;
  durationMs: number;
}

export interface Sender {
  send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<SendOutcome>;
  close(): Promise<void>;
}

/** Judges an endpoint URL before it is saved: its canonical form, or why it is refused. */
export type EndpointUrlCheck = (raw: string) => Promise<{ ok: true; href: string } | { ok: false; reason: string }>;
