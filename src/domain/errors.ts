/**
 * The closed set of error codes (docs/spec/contract.md), their HTTP statuses and the one error
 * type every layer throws. REST maps it to a response, MCP to an `isError` tool result, the web
 * pages to a message next to the form.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  malformed_request: 400,
  invalid_cursor: 400,
  invalid_signature: 400,
  signature_required: 400,
  unauthorized: 401,
  client_blocked: 403,
  forbidden: 403,
  task_not_found: 404,
  not_found: 404,
  question_not_found: 404,
  method_not_allowed: 405,
  duplicate_task: 409,
  invalid_transition: 409,
  already_answered: 409,
  approval_not_allowed: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  capacity_reached: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Extra fields the contract adds to some error bodies (details, existing_task_id, limit, …). */
export type ErrorExtras = Record<string, unknown>;

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: string[];
  [extra: string]: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra fields of the error body (details, existing_task_id, limit, …). */
  readonly extras: ErrorExtras;
  /** Response headers that belong to this refusal (Retry-After, rate-limit headers). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, extras: ErrorExtras = {}, headers: Record<string, string> = {}) {
    // A refusal is an expected answer, not a fault: skip the stack trace, which costs more than
    // the rest of a refused request (and floods of refusals are what abuse looks like).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.extras = extras;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return { error: this.code, message: this.message, ...this.extras };
  }
}

export function validationFailed(details: string[], message = 'The request has invalid fields; see details.'): AppError {
  return new AppError('validation_failed', message, { details });
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
