import { A2A_ERRORS, A2AError, isA2AError } from '../domain/a2a/errors.js';
import { AppError, type ErrorCode, isAppError } from '../domain/errors.js';

/**
 * The A2A door's error envelopes (contract "A2A 1.0", A2A 1.0 §5.4, §9.5, §11.6).
 *
 * - A2A's own errors keep the spec's codes: JSON-RPC `{code, message, data: [ErrorInfo]}`;
 *   HTTP+JSON the spec's status with a google.rpc.Status body whose details carry the ErrorInfo
 *   (`reason`, domain `a2a-protocol.org`), as the SDK's clients read them.
 * - The contract's refusals: JSON-RPC -32602 with `data: {error, details}` for a request the
 *   contract refuses (validation_failed and the other 4xx of a bad request), -32050 rate limited
 *   (`data.retry_after_seconds`), -32051 duplicate, -32052 blocked, -32053 service unavailable;
 *   over HTTP+JSON the contract's own status and error body.
 * - An unknown task is A2A's TaskNotFoundError on both bindings.
 */

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const DOMAIN = 'a2a-protocol.org';

/** JSON-RPC codes of the contract's refusals (contract "A2A 1.0"). */
const CONTRACT_CODES: Partial<Record<ErrorCode, number>> = {
  invalid_json: -32700,
  rate_limited: -32050,
  capacity_reached: -32050,
  duplicate_task: -32051,
  client_blocked: -32052,
  service_unavailable: -32053,
  internal_error: -32603,
};

/** AppErrors that A2A names itself. */
function asA2A(error: AppError): A2AError | undefined {
  if (error.code === 'task_not_found') return new A2AError('TaskNotFound', error.message);
  return undefined;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** The JSON-RPC error object of any error; undefined for a fault (the caller logs it and answers -32603). */
export function jsonRpcError(error: unknown): { error: JsonRpcError; headers: Record<string, string> } | undefined {
  const a2a = isA2AError(error) ? error : isAppError(error) ? asA2A(error) : undefined;
  if (a2a) {
    const spec = A2A_ERRORS[a2a.kind];
    return { error: { code: spec.code, message: a2a.message, data: [{ '@type': ERROR_INFO, reason: spec.reason, domain: DOMAIN }] }, headers: {} };
  }
  if (!isAppError(error)) return undefined;
  const { message: _message, ...data } = error.toBody();
  return { error: { code: CONTRACT_CODES[error.code] ?? -32602, message: error.message, data }, headers: error.headers };
}

/** The HTTP+JSON answer of any error; undefined for a fault. */
export function restError(error: unknown): { status: number; body: unknown; headers: Record<string, string> } | undefined {
  const a2a = isA2AError(error) ? error : isAppError(error) ? asA2A(error) : undefined;
  if (a2a) {
    const spec = A2A_ERRORS[a2a.kind];
    return {
      status: a2a.httpStatus,
      body: {
        error: { code: a2a.httpStatus, status: spec.status, message: a2a.message, details: [{ '@type': ERROR_INFO, reason: spec.reason, domain: DOMAIN }] },
      },
      headers: {},
    };
  }
  if (!isAppError(error)) return undefined;
  return { status: error.status, body: error.toBody(), headers: error.headers };
}

/** A fault's error, as every door words it. */
export function internalError(requestId: string): AppError {
  return new AppError('internal_error', `Something went wrong on our side. Request id: ${requestId}.`);
}
