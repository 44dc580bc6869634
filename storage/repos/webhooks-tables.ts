// Row types of webhook endpoints, their deliveries and attempts (migration 004).

export interface WebhookEndpointRow {
  id: string;
  team_id: string;
  url: string;
  /** JSON array of subscribed event types. */
  events: string;
  status: 'enabled' | 'disabled';
  /** The signing secret (`whsec_…`), sealed with the secret box. */
  secret_sealed: string;
  /** The secret replaced by the last rotation, still signing until `previous_secret_expires_at`. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  /** Only outbox events after this sequence number reach the endpoint (set at creation). */
  from_seq: number;
  /** Why the service disabled it (e.g. `gone` after a 410), or null. */
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export type DeliveryStatus = 'pending' | 'delivering' | 'succeeded' | 'failed';

/** One message: one outbox event for one endpoint. Its id is the `wh-id` header. */
export interface WebhookDeliveryRow {
  id: string;
  team_id: string;
  endpoint_id: string;
  event_id: string;
  event_seq: number;
  event_type: string;
  status: DeliveryStatus;
  /** Attempts in the current round (a replay starts a new round). */
  attempts_made: number;
  next_attempt_at: string | null;
  /** While `delivering`: the claim expires then (a crashed claimer's work is retried). */
  lease_until: string | null;
  lease_owner: string | null;
  /** Whether the next attempt is a replay asked through the API. */
  replay: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptRow {
  id: string;
  team_id: string;
  endpoint_id: string;
  delivery_id: string;
  event_type: string;
  attempted_at: string;
  trigger: 'scheduled' | 'retry' | 'replay';
  result: 'succeeded' | 'failed';
  status_code: number | null;
  duration_ms: number;
  /** The first KiB of the answer body, as text. */
  response: string | null;
  error: string | null;
}

/** A consumer's position in the event outbox. */
export interface OutboxCursorRow {
  name: string;
  seq: number;
}
