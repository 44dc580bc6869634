import type { BroadcastRow } from '../../storage/repos/index.js';
import { invalidParameter, validationError } from '../errors.js';
import { looksLikeId } from '../ids.js';

// The create and update bodies (docs/api-conventions.md, Broadcasts; the resend SDK's fields):
// shapes only. Whether the from-domain is verified, the segment live or the body present is the
// send gate's question, asked when the broadcast is sent (a draft may be incomplete).

export interface BroadcastFields {
  name?: string | null;
  segment_id?: string | null;
  /** The older name of `segment_id`. */
  audience_id?: string | null;
  topic_id?: string | null;
  template_id?: string | null;
  from?: string | null;
  subject?: string | null;
  reply_to?: string | string[] | null;
  preview_text?: string | null;
  html?: string | null;
  text?: string | null;
}

export interface CreateBroadcastInput extends BroadcastFields {
  /** Send at once (or at `scheduled_at`) instead of keeping a draft. */
  send?: boolean | null;
  scheduled_at?: string | null;
  acknowledge_checks?: boolean | null;
}

export interface SendBroadcastInput {
  scheduled_at?: string | null;
  acknowledge_checks?: boolean | null;
}

export const NAME_MAX = 200;
const SUBJECT_MAX_BYTES = 998;
const PREVIEW_MAX = 1000;
const BODY_MAX_BYTES = 5 * 1024 * 1024;
const REPLY_TO_MAX = 50;

type Columns = Partial<Pick<BroadcastRow, 'name' | 'segment_id' | 'topic_id' | 'template_id' | 'from_header' | 'subject' | 'reply_to_json' | 'preview_text' | 'html' | 'text'>>;

const oneLine = (path: string, value: unknown, max: number, bytes = false): string | null => {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw validationError(422, path, `\`${path}\` must be a string.`);
  if (/[\r\n\0]/.test(value)) throw validationError(422, path, `\`${path}\` must be one line.`);
  if ((bytes ? Buffer.byteLength(value) : [...value].length) > max) throw validationError(422, path, `\`${path}\` must be at most ${max} ${bytes ? 'bytes' : 'characters'}.`);
  return value;
};

const body = (path: string, value: unknown): string | null => {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string') throw validationError(422, path, `\`${path}\` must be a string.`);
  if (Buffer.byteLength(value) > BODY_MAX_BYTES) throw validationError(422, path, `\`${path}\` must be at most 5 MB.`);
  return value;
};

const id = (path: string, value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || !looksLikeId(value)) throw invalidParameter(path, `\`${path}\` must be an id.`);
  return value.toLowerCase();
};

function replyTo(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const list = Array.isArray(value) ? value : [value];
  if (list.length > REPLY_TO_MAX) throw validationError(422, 'reply_to', `\`reply_to\` can hold at most ${REPLY_TO_MAX} addresses.`);
  list.forEach((v, i) => oneLine(`reply_to[${i}]`, v, 320));
  return list.length ? JSON.stringify(list) : null;
}

/** The columns a create or update body sets: only the fields it names (update); `undefined` leaves one. */
export function broadcastColumns(input: BroadcastFields, creating: boolean): Columns {
  const out: Columns = {};
  const has = (key: keyof BroadcastFields) => input[key] !== undefined;
  if (has('name') || creating) out.name = (oneLine('name', input.name, NAME_MAX) ?? '').trim() || 'Untitled';
  if (has('segment_id') || has('audience_id')) out.segment_id = id(has('segment_id') ? 'segment_id' : 'audience_id', input.segment_id ?? input.audience_id);
  if (has('topic_id')) out.topic_id = id('topic_id', input.topic_id);
  if (has('template_id')) out.template_id = oneLine('template_id', input.template_id, 100);
  if (has('from')) out.from_header = oneLine('from', input.from, 998);
  if (has('subject')) out.subject = oneLine('subject', input.subject, SUBJECT_MAX_BYTES, true);
  if (has('reply_to')) out.reply_to_json = replyTo(input.reply_to);
  if (has('preview_text')) out.preview_text = oneLine('preview_text', input.preview_text, PREVIEW_MAX);
  if (has('html')) out.html = body('html', input.html);
  if (has('text')) out.text = body('text', input.text);
  return out;
}

/** `scheduled_at` only with `send: true` (the SDK's rule). */
export function checkSendFlags(input: CreateBroadcastInput): void {
  if (input.send !== undefined && input.send !== null && typeof input.send !== 'boolean') throw validationError(422, 'send', '`send` must be a boolean.');
  if (input.scheduled_at !== undefined && input.scheduled_at !== null && input.send !== true) {
    throw validationError(422, 'scheduled_at', '`scheduled_at` can only be used with `send: true`.');
  }
}
