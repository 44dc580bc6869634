// The spec's closed list of error names (Errors). Branching clients depend on them; never add a
// name here that the spec does not have.
export const errorNames = [
  'invalid_idempotency_key', 'validation_error', 'missing_api_key', 'invalid_api_key',
  'restricted_api_key', 'email_above_quota', 'invalid_permission', 'suspended_api_key',
  'inbox_not_set_up', 'not_found', 'method_not_allowed', 'concurrent_idempotent_requests',
  'invalid_idempotent_request', 'resource_locked', 'receiving_mx_in_use', 'conversation_conflict',
  'site_moved', 'precondition_failed', 'invalid_attachment', 'invalid_parameter',
  'missing_required_field', 'missing_required_parameter', 'snooze_needs_a_person',
  'daily_quota_exceeded', 'monthly_quota_exceeded', 'marketing_quota_exceeded',
  'rate_limit_exceeded', 'application_error', 'not_implemented', 'service_unavailable',
] as const;

export type ErrorName = (typeof errorNames)[number];

export interface FieldError {
  path: string;
  message: string;
}

export interface ServiceErrorOptions {
  errors?: FieldError[];
  details?: Record<string, unknown>;
  code?: number;
  /** The refused resource can be taken over (a domain another team holds: POST /domains/claim). */
  claimable?: boolean;
  headers?: Record<string, string>;
}

/** A refusal the caller should see as the spec's error body. */
export class ServiceError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorName: ErrorName,
    message: string,
    readonly options: ServiceErrorOptions = {},
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new ServiceError(404, 'not_found', `${what} not found`);

export const invalidParameter = (name: string, message: string) =>
  new ServiceError(422, 'invalid_parameter', message, { errors: [{ path: name, message }] });

export const validationError = (status: 400 | 403 | 422, path: string | undefined, message: string) =>
  new ServiceError(status, 'validation_error', message, path ? { errors: [{ path, message }] } : {});

export const missingField = (path: string) =>
  new ServiceError(422, 'missing_required_field', `Missing \`${path}\` field.`, { errors: [{ path, message: 'is required' }] });
