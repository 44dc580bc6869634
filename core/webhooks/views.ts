import type { WebhookAttemptRow, WebhookDeliveryRow } from '../../storage/repos/index.js';

export interface WebhookListItem {
  id: string;
  endpoint: string;
  events: string[];
  status: 'enabled' | 'disabled';
  created_at: string;
}

export interface WebhookView extends WebhookListItem {
  object: 'webhook';
  signing_secret: string;
}

/** A message as lists show it: without its payload. */
export interface MessageItem {
  /** The `wh-id` header value. */
  id: string;
  event_id: string;
  type: string;
  created_at: string;
  status: 'pending' | 'attempting' | 'success' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
}

/** A message as the SDK's `webhooks.events` calls see it (their "event" is our message). */
export interface MessageView extends MessageItem {
  object: 'webhook_event';
  payload?: unknown;
}

export interface AttemptView {
  object: 'webhook_attempt';
  id: string;
  message_id: string;
  event_type: string;
  sent_at: string;
  trigger: WebhookAttemptRow['trigger'];
  result: WebhookAttemptRow['result'];
  http_status_code: number | null;
  duration_ms: number;
  response: string | null;
  error: string | null;
}

export function messageView(row: WebhookDeliveryRow, payload: unknown): MessageView {
  const status = row.status === 'succeeded' ? 'success'
    : row.status === 'failed' ? 'failed'
      : row.status === 'pending' && row.attempts_made === 0 ? 'pending' : 'attempting';
  const view: MessageView = {
    object: 'webhook_event', id: row.id, event_id: row.event_id, type: row.event_type, created_at: row.created_at,
    status, attempts: row.attempts_made, next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
  };
  if (payload !== undefined) view.payload = payload;
  return view;
}

export function attemptView(row: WebhookAttemptRow): AttemptView {
  return {
    object: 'webhook_attempt', id: row.id, message_id: row.delivery_id, event_type: row.event_type, sent_at: row.attempted_at,
    trigger: row.trigger, result: row.result, http_status_code: row.status_code, duration_ms: row.duration_ms,
    response: row.response, error: row.error,
  };
}
