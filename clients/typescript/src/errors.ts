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
/** The deadline of waitForResult passed before the task was delivered or rejected; `task` is the last state seen. */
export class WaitTimeoutError<T = unknown> extends HumanTaskError {
  override readonly name = 'WaitTimeoutError';
  readonly task: T | undefined;
  constructor(message: string, task: T | undefined) {
    super('wait_timeout', message);
    this.task = task;
  }
}

const BY_CODE: Partial<Record<ErrorCode, typeof HumanTaskError>> = {
  rate_limited: RateLimitedError,
  capacity_reached: CapacityReachedError,
  duplicate_task: DuplicateTaskError,
  validation_failed: ValidationFailedError,
  task_not_found: TaskNotFoundError,
  client_blocked: ClientBlockedError,
  invalid_cursor: InvalidCursorError,
};

/** The error for a refusal: the class of its code, else a plain HumanTaskError. */
export function errorFromResponse(status: number, body: unknown, retryAfterSeconds: number | undefined): HumanTaskError {
  if (isErrorBody(body)) {
    const Class = BY_CODE[body.error as ErrorCode] ?? HumanTaskError;
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
  return typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string' && typeof (body as { message?: unknown }).message === 'string';
}
