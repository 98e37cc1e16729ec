import type { ErrorBody, ErrorCode } from './types.js';

/**
 * Typed errors named by the contract's error codes. Every refusal of the service is a
 * HumanTaskError whose `code` is the body's `error`; the client adds three codes of its own for
 * what happens on its side: `network_error`, `unexpected_response` and `wait_timeout`.
 */

export type ClientErrorCode = ErrorCode | 'network_error' | 'unexpected_response' | 'wait_timeout';

export class HumanTaskError extends Error {
  readonly code: ClientErrorCode;
  /** The HTTP status (0 when no response arrived). */
  readonly status: number;
  /** The service's error body, as received. */
  readonly body: ErrorBody | undefined;
  /** Seconds to wait before trying again (Retry-After, or the body's retry_after_seconds), when the service said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ClientErrorCode, message: string, options: { status?: number; body?: ErrorBody; retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HumanTaskError';
    this.code = code;
    this.status = options.status ?? 0;
    this.body = options.body;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** 429 `rate_limited`: a per-client limit; `limit` names which. */
export class RateLimitedError extends HumanTaskError {
  override readonly name = 'RateLimitedError';
  get limit(): string | undefined {
    return typeof this.body?.limit === 'string' ? this.body.limit : undefined;
  }
}
/** 429 `capacity_reached`: the service's daily capacity is used up. */
export class CapacityReachedError extends HumanTaskError {
  override readonly name = 'CapacityReachedError';
}
/** 409 `duplicate_task`: the same task was submitted within 24 h; `existingTaskId` is it. */
export class DuplicateTaskError extends HumanTaskError {
  override readonly name = 'DuplicateTaskError';
  get existingTaskId(): string | undefined {
    return typeof this.body?.existing_task_id === 'string' ? this.body.existing_task_id : undefined;
  }
}
/** 422 `validation_failed`: `details` names every field at fault. */
export class ValidationFailedError extends HumanTaskError {
  override readonly name = 'ValidationFailedError';
  get details(): string[] {
    return this.body?.details ?? [];
  }
}
/** 404 `task_not_found`. */
export class TaskNotFoundError extends HumanTaskError {
  override readonly name = 'TaskNotFoundError';
}
/** 403 `client_blocked`. */
export class ClientBlockedError extends HumanTaskError {
  override readonly name = 'ClientBlockedError';
}
/** 400 `invalid_cursor`: start the listing again without a cursor. */
export class InvalidCursorError extends HumanTaskError {
  override readonly name = 'InvalidCursorError';
}
/** 400 `invalid_json`: the body was not JSON. */
export class InvalidJsonError extends HumanTaskError {
  override readonly name = 'InvalidJsonError';
}
/** 400 `malformed_request`: JSON but not an object, or a malformed query parameter. */
export class MalformedRequestError extends HumanTaskError {
  override readonly name = 'MalformedRequestError';
}
/** 401 `unauthorized` (admin endpoints only). */
export class UnauthorizedError extends HumanTaskError {
  override readonly name = 'UnauthorizedError';
}
/** 404 `not_found`: no such path. */
export class NotFoundError extends HumanTaskError {
  override readonly name = 'NotFoundError';
}
/** 405 `method_not_allowed`. */
export class MethodNotAllowedError extends HumanTaskError {
  override readonly name = 'MethodNotAllowedError';
}
/** 409 `invalid_transition` (admin endpoints only). */
export class InvalidTransitionError extends HumanTaskError {
  override readonly name = 'InvalidTransitionError';
}
/** 413 `payload_too_large`. */
export class PayloadTooLargeError extends HumanTaskError {
  override readonly name = 'PayloadTooLargeError';
}
/** 415 `unsupported_media_type`. */
export class UnsupportedMediaTypeError extends HumanTaskError {
  override readonly name = 'UnsupportedMediaTypeError';
}
/** 500 `internal_error`: the service failed; the message names the request id. */
export class InternalError extends HumanTaskError {
  override readonly name = 'InternalError';
}
/** 503 `service_unavailable`: the service's store does not answer. */
export class ServiceUnavailableError extends HumanTaskError {
  override readonly name = 'ServiceUnavailableError';
}
/** 403 `forbidden`: an operator's role does not allow the action. */
export class ForbiddenError extends HumanTaskError {
  override readonly name = 'ForbiddenError';
}
/** 404 `question_not_found`: no such question on that task. */
export class QuestionNotFoundError extends HumanTaskError {
  override readonly name = 'QuestionNotFoundError';
}
/** 409 `already_answered`: the question has its answer. */
export class AlreadyAnsweredError extends HumanTaskError {
  override readonly name = 'AlreadyAnsweredError';
}
/** 409 `approval_not_allowed`: an operator approving twice (the proposer included), or nothing proposed (admin API). */
export class ApprovalNotAllowedError extends HumanTaskError {
  override readonly name = 'ApprovalNotAllowedError';
}
/** 400 `invalid_signature`: the request's Web Bot Auth signature did not verify; `details` says why. */
export class InvalidSignatureError extends HumanTaskError {
  override readonly name = 'InvalidSignatureError';
}
/** 400 `signature_required`: listing your own tasks needs a signed request (the client's `agent` option). */
export class SignatureRequiredError extends HumanTaskError {
  override readonly name = 'SignatureRequiredError';
}
/** The deadline of waitForResult passed before the task was delivered or rejected; `task` is the last state seen. */
export class WaitTimeoutError<T = unknown> extends HumanTaskError {
  override readonly name = 'WaitTimeoutError';
  readonly task: T | undefined;
  constructor(message: string, task: T | undefined) {
    super('wait_timeout', message);
    this.task = task;
  }
}

// Every code of the server's closed set (a code added there fails this type-check until it has a class).
const BY_CODE: Record<ErrorCode, typeof HumanTaskError> = {
  invalid_json: InvalidJsonError,
  malformed_request: MalformedRequestError,
  invalid_cursor: InvalidCursorError,
  invalid_signature: InvalidSignatureError,
  signature_required: SignatureRequiredError,
  unauthorized: UnauthorizedError,
  client_blocked: ClientBlockedError,
  task_not_found: TaskNotFoundError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  duplicate_task: DuplicateTaskError,
  invalid_transition: InvalidTransitionError,
  payload_too_large: PayloadTooLargeError,
  unsupported_media_type: UnsupportedMediaTypeError,
  validation_failed: ValidationFailedError,
  rate_limited: RateLimitedError,
  capacity_reached: CapacityReachedError,
  internal_error: InternalError,
  service_unavailable: ServiceUnavailableError,
  forbidden: ForbiddenError,
  question_not_found: QuestionNotFoundError,
  already_answered: AlreadyAnsweredError,
  approval_not_allowed: ApprovalNotAllowedError,
};

/** The error for a refusal: the class of its code, else a plain HumanTaskError. */
export function errorFromResponse(status: number, body: unknown, retryAfterSeconds: number | undefined): HumanTaskError {
  if (isErrorBody(body)) {
    // A code this client does not know yet (a newer service) is still a HumanTaskError with that code.
    const Class = (BY_CODE as Partial<Record<string, typeof HumanTaskError>>)[body.error] ?? HumanTaskError;
    const retry = retryAfterSeconds ?? (typeof body.retry_after_seconds === 'number' ? body.retry_after_seconds : undefined);
    const options: { status: number; body: ErrorBody; retryAfterSeconds?: number } = { status, body };
    if (retry !== undefined) options.retryAfterSeconds = retry;
    return new Class(body.error as ErrorCode, body.message, options);
  }
  const options: { status: number; retryAfterSeconds?: number } = { status };
  if (retryAfterSeconds !== undefined) options.retryAfterSeconds = retryAfterSeconds;
  return new HumanTaskError('unexpected_response', `The service answered ${status} without an error body.`, options);
}

function isErrorBody(body: unknown): body is ErrorBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { error?: unknown }).error === 'string' &&
    typeof (body as { message?: unknown }).message === 'string'
  );
}
