// The descriptions of the error answers in the OpenAPI document, shared by the controllers'
// `@Response<ErrorBody>(status, description)` decorators: tsoa reads these constants when it
// writes the document. Each names the error `name`s a client can branch on for that status
// (docs/api-conventions.md has the order in which they are checked).

export const badRequest =
  'validation_error: malformed JSON, an unknown or ill-typed body field (one `errors[]` item per field), or a path parameter that is not valid percent-encoding.';

export const badSendRequest =
  'validation_error (a field is wrong; one `errors[]` item per field) or invalid_idempotency_key (`Idempotency-Key` outside 1-256 characters).';

export const unauthorized =
  'missing_api_key (no `Authorization: Bearer` header), invalid_api_key, or restricted_api_key (a sending_access key on a route that needs full_access).';

export const forbidden =
  'validation_error with `code: 1010` when the `User-Agent` header is missing; restricted_api_key (revoked key) or suspended_api_key.';

export const sendForbidden =
  'validation_error: the `from` domain is not verified or not allowed for this key, a sandbox region refuses the recipient, or the `User-Agent` header is missing (`code: 1010`); restricted_api_key or suspended_api_key.';

export const keyForbidden =
  'invalid_permission: Inbox access can only be granted on the admin socket; validation_error with `code: 1010` when the `User-Agent` header is missing; restricted_api_key or suspended_api_key.';

export const notFound = 'not_found: no such resource in this team (another team\'s ids are not found either).';

export const idempotencyConflict =
  'concurrent_idempotent_requests (the same `Idempotency-Key` is in flight) or invalid_idempotent_request (the same key with a different request).';

export const emailLocked = 'resource_locked: the email has already been dispatched.';

export const domainConflict =
  'resource_locked (the name is verified on another team: claim it with POST /domains/claim; `claimable: true`) or receiving_mx_in_use (receiving would take mail from the MX in place; send `confirm_replace_mx`).';

export const domainLocked =
  'resource_locked: the name is verified on (or was claimed by) another team, or a DKIM rotation is already waiting for its record.';

export const messageLocked = 'resource_locked: the message is being delivered right now.';

export const unprocessable =
  'missing_required_field, missing_required_parameter, invalid_parameter (a query or path parameter is malformed; `errors[]` names it) or validation_error (the resource refuses the value).';

export const invalidSend =
  'missing_required_field, validation_error (invalid recipient, bulk send without unsubscribe, failing checks) or invalid_attachment.';

export const rateLimited = 'rate_limit_exceeded: the team\'s request bucket is empty; retry after `retry-after` seconds.';

export const internal = 'application_error: an unexpected failure; the message names the request id.';

export const unavailable = 'service_unavailable: storage is full or failing (nothing was stored); retry after `retry-after` seconds.';

export const dnsUnavailable = 'service_unavailable: DNS or the DNS provider did not answer, or storage is full or failing; retry later.';


export const teamUnavailable =
  'service_unavailable: `ai_assist_enabled: true` while no AI provider is configured on the appliance, or storage is full or failing.';

export const imageRefused =
  'missing_required_field (no `content`) or validation_error on `content`: not base64, not a PNG, JPEG or SVG by its bytes, over the size or pixel limits, or an SVG holding a script, event handler, link, animation, embedded HTML or external reference (the message names it).';

export const linksUnavailable =
  'service_unavailable: no link can be made (no `public_base_url` and the API is not on a loopback address; nothing was stored), or storage is full or failing.';


export const importUploadRefused =
  'validation_error: the body is not multipart/form-data, has a part other than `file`, `column_map`, `on_conflict`, `segments` and `topics`, or sends one twice.';

export const importRefused =
  'missing_required_field (no `file`) or validation_error naming the place: the file is over 50 MB, empty or has no readable header; `column_map` is not JSON, does not map `email`, names a column the header lacks or a type other than the declared one; a bad `on_conflict`; an unknown topic or segment; or `Contact limit reached.`';
export const broadcastForbidden =
  'validation_error: marketing sends are paused on the service, or the team cannot send (`details.check` names the gate check); validation_error with `code: 1010` when the `User-Agent` header is missing; restricted_api_key or suspended_api_key.';

export const broadcastRefused =
  'validation_error: a send-gate check failed (`details.check`: domain, postal_address, segment or body), a content check failed (`details.checks`; send again with `acknowledge_checks: true`), or the broadcast is not in a state that allows it; invalid_parameter (`topic_id`, an id, `type`).';
