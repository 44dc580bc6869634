import { ValidateError } from '@tsoa/runtime';
import { ServiceError, type ErrorName, type FieldError } from '../core/errors.js';
import { storageFailure } from '../storage/files/index.js';

/** Every failure's body (the spec's Errors section): branch on `name`, never on `message`. */
export interface ErrorBody {
  /** The HTTP status, repeated. @isInt */
  statusCode: number;
  name: ErrorName;
  /** Human text; may be reworded. */
  message: string;
  /** Only 1010, with a missing `User-Agent`. @isInt */
  code?: number;
  /** The refused domain can be taken over with POST /domains/claim. */
  claimable?: boolean;
  /** One item per failing field; additive. */
  errors?: FieldError[];
  details?: Record<string, unknown>;
}

export interface Translated {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/** The one place any failure becomes the spec's error body. */
export function translateError(err: unknown, requestId: string): Translated {
  if (err instanceof ServiceError) return fromServiceError(err);
  if (err instanceof ValidateError) return fromValidateError(err);
  const bodyParser = bodyParserError(err);
  if (bodyParser) return bodyParser;
  // A full or failing disk stored nothing: a temporary refusal the client retries, never a 500.
  const storage = storageFailure(err);
  if (storage) return make(503, 'service_unavailable', storage === 'full' ? 'Storage is full; nothing was stored. Try again later.' : 'Storage could not complete the write. Try again later.', {}, { 'retry-after': '30' });
  return make(500, 'application_error', `An unexpected error occurred (request id ${requestId}).`);
}

export function make(status: number, name: ErrorName, message: string, extra: Partial<ErrorBody> = {}, headers: Record<string, string> = {}): Translated {
  return { status, body: { statusCode: status, name, message, ...extra }, headers };
}

function fromServiceError(err: ServiceError): Translated {
  const extra: Partial<ErrorBody> = {};
  if (err.options.code !== undefined) extra.code = err.options.code;
  if (err.options.claimable !== undefined) extra.claimable = err.options.claimable;
  if (err.options.errors) extra.errors = err.options.errors;
  if (err.options.details) extra.details = err.options.details;
  return make(err.statusCode, err.errorName, err.message, extra, err.options.headers ?? {});
}

interface Classified {
  excess: FieldError[];
  missing: FieldError[];
  badBody: FieldError[];
  missingParams: FieldError[];
  badParams: FieldError[];
}

// tsoa names body fields `body.<field>` (or `requestBody…`) and parameters by their own name.
function fromValidateError(err: ValidateError): Translated {
  const c: Classified = { excess: [], missing: [], badBody: [], missingParams: [], badParams: [] };
  for (const [key, detail] of Object.entries(err.fields)) {
    const message = String(detail.message ?? 'invalid');
    const inBody = /^(body|requestBody)\b/.test(key);
    const path = key.replace(/^(body|requestBody)\.?/, '') || 'body';
    const item = { path, message };
    if (inBody && /excess property/i.test(message)) {
      for (const extraName of excessNames(message, detail.value)) {
        const fieldPath = path.split('.').at(-1) === extraName ? path : joinPath(path, extraName);
        c.excess.push({ path: fieldPath, message: `unknown field \`${extraName}\`` });
      }
    } else if (inBody && /is required/i.test(message)) c.missing.push(item);
    else if (inBody) c.badBody.push(item);
    else if (/is required/i.test(message)) c.missingParams.push(item);
    else c.badParams.push(item);
  }
  if (c.excess.length) return make(400, 'validation_error', `Unknown field${c.excess.length > 1 ? 's' : ''}: ${c.excess.map((e) => e.path).join(', ')}.`, { errors: c.excess });
  if (c.missing.length) return make(422, 'missing_required_field', `Missing required field${c.missing.length > 1 ? 's' : ''}: ${c.missing.map((e) => e.path).join(', ')}.`, { errors: c.missing });
  if (c.badBody.length) return make(400, 'validation_error', `Invalid field${c.badBody.length > 1 ? 's' : ''}: ${c.badBody.map((e) => e.path).join(', ')}.`, { errors: c.badBody });
  if (c.missingParams.length) return make(422, 'missing_required_parameter', `Missing required parameter: ${c.missingParams.map((e) => e.path).join(', ')}.`, { errors: c.missingParams });
  return make(422, 'invalid_parameter', `Invalid parameter: ${c.badParams.map((e) => e.path).join(', ')}.`, { errors: c.badParams });
}

// tsoa reports all extras of one object in one message: `"a","b" is an excess property…` or
// `Could not match the union…` — take the quoted names.
function excessNames(message: string, value: unknown): string[] {
  const quoted = /^"(.+?)" is an excess propert/i.exec(message)?.[1];
  if (quoted) return quoted.split(/","/);
  return value && typeof value === 'object' ? Object.keys(value) : ['?'];
}

const joinPath = (parent: string, child: string) => (parent === 'body' ? child : `${parent}.${child}`);

function bodyParserError(err: unknown): Translated | undefined {
  const type = (err as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') return make(400, 'validation_error', 'The request body is not valid JSON.', { errors: [{ path: 'body', message: 'invalid JSON' }] });
  if (type === 'entity.too.large') return make(400, 'validation_error', 'The request body is too large.', { errors: [{ path: 'body', message: 'too large' }] });
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return make(400, 'validation_error', 'The request body encoding is not supported.');
  if (type === 'request.aborted') return make(400, 'validation_error', 'The request body was cut short.');
  return undefined;
}
