/**
 * The A2A protocol's own errors (A2A 1.0 §3.3.2, §5.4): each with its JSON-RPC code, HTTP status,
 * google.rpc status name and ErrorInfo reason. The contract's own refusals (validation, limits,
 * duplicates, blocks) stay AppErrors; the A2A door turns both into its bindings' envelopes.
 */

export const A2A_ERRORS = {
  TaskNotFound: { code: -32001, http: 404, status: 'NOT_FOUND', reason: 'TASK_NOT_FOUND' },
  TaskNotCancelable: { code: -32002, http: 400, status: 'FAILED_PRECONDITION', reason: 'TASK_NOT_CANCELABLE' },
  PushNotificationNotSupported: { code: -32003, http: 400, status: 'FAILED_PRECONDITION', reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED' },
  UnsupportedOperation: { code: -32004, http: 400, status: 'FAILED_PRECONDITION', reason: 'UNSUPPORTED_OPERATION' },
  ContentTypeNotSupported: { code: -32005, http: 415, status: 'INVALID_ARGUMENT', reason: 'CONTENT_TYPE_NOT_SUPPORTED' },
  VersionNotSupported: { code: -32009, http: 400, status: 'FAILED_PRECONDITION', reason: 'VERSION_NOT_SUPPORTED' },
  // JSON-RPC's own, for what is not a valid A2A request at all.
  InvalidParams: { code: -32602, http: 400, status: 'INVALID_ARGUMENT', reason: 'INVALID_PARAMS' },
  InvalidRequest: { code: -32600, http: 400, status: 'INVALID_ARGUMENT', reason: 'INVALID_REQUEST' },
  MethodNotFound: { code: -32601, http: 404, status: 'NOT_FOUND', reason: 'METHOD_NOT_FOUND' },
} as const;

export type A2AErrorKind = keyof typeof A2A_ERRORS;

export class A2AError extends Error {
  readonly kind: A2AErrorKind;
  /** The HTTP+JSON status when it is not the kind's own (415 for a body that is not JSON). */
  readonly httpStatus: number;

  constructor(kind: A2AErrorKind, message: string, httpStatus: number = A2A_ERRORS[kind].http) {
    // An expected answer, not a fault: no stack trace (as AppError).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'A2AError';
    this.kind = kind;
    this.httpStatus = httpStatus;
  }
}

export function isA2AError(value: unknown): value is A2AError {
  return value instanceof A2AError;
}
