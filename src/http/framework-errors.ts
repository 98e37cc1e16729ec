import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';

/**
 * Every error Fastify (or Node's HTTP parser) can raise before a route handler runs, mapped to the
 * contract's error body: a client never sees the framework's own `{"code":"FST_ERR_…"}` body, a
 * 414, or a response without the usual headers (contract: "Errors of the URL itself").
 *
 * The codes come from node_modules/fastify/lib/errors.js; the others it defines are raised at
 * start-up (bad options, duplicate routes, plugin timeouts) or by our own handlers misusing the
 * reply, which the error handler reports as internal_error.
 */
export const FRAMEWORK_ERRORS: Readonly<Record<string, { code: AppError['code']; message: string }>> = {
  // Router: a path parameter that is not valid percent-encoding, or one over maxParamLength.
  FST_ERR_BAD_URL: { code: 'malformed_request', message: 'The URL is not valid percent-encoding.' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'malformed_request', message: 'A path parameter is too long.' },
  // Router: an asynchronous route constraint failed (none are registered; mapped for completeness).
  FST_ERR_ASYNC_CONSTRAINT: { code: 'internal_error', message: 'Something went wrong on our side.' },
  // Body parsing.
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'invalid_json', message: 'The request body is not valid JSON.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'invalid_json', message: 'The request body is empty; send a JSON object.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large', message: 'The request body is over the 64 KB limit (10 MB for the admin import).' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', message: 'Send the body as JSON with Content-Type: application/json.' },
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: { code: 'unsupported_media_type', message: 'Send the body as JSON with Content-Type: application/json.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'malformed_request', message: 'The request body does not match its Content-Length.' },
  // Schema validation of params, query and headers (bodies are validated by the service layer).
  FST_ERR_VALIDATION: { code: 'malformed_request', message: 'The request has malformed parameters; see details.' },
  // A route's handler timeout (none are configured; mapped for completeness).
  FST_ERR_HANDLER_TIMEOUT: { code: 'service_unavailable', message: 'The request took too long; try again shortly.' },
};

/** Paths whose only parameter is a task id: an over-long one names no task (404, not 400). */
const TASK_PATHS = /^\/api\/v1\/(admin\/)?tasks\/[^/]+(\/|$)/;

/** The contract's answer to a framework error (undefined: not one of the framework's). */
export function fromFrameworkCode(error: FastifyError, path = ''): AppError | undefined {
  const known = FRAMEWORK_ERRORS[error.code];
  if (known === undefined) return undefined;
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH' && TASK_PATHS.test(path)) {
    return new AppError('task_not_found', 'No task has this id.');
  }
  if (known.code === 'malformed_request') {
    const details =
      error.code === 'FST_ERR_BAD_URL'
        ? ['the path must be valid percent-encoding']
        : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? ['a path parameter is over 200 characters']
          : ['the request body must match its Content-Length'];
    return new AppError('malformed_request', known.message, { details });
  }
  return new AppError(known.code, known.message);
}

/** What every response carries, set by hooks that the router errors below never reach. */
export interface EarlyHeaders {
  /** RateLimit-Policy of the read kind (the policy of every route that is not a submission). */
  policy: string;
  /** Headers CORS exposes to browsers. */
  exposed: readonly string[];
}

function earlyHeaderValues(early: EarlyHeaders, requestId: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': early.exposed.join(', '),
    'RateLimit-Policy': early.policy,
    'X-Request-Id': requestId,
  };
}

/**
 * Fastify's `frameworkErrors` option: called for a bad URL or an over-long parameter before any
 * hook runs, so the headers the hooks would set are set here.
 */
export function frameworkErrorHandler(early: EarlyHeaders) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const path = (request.raw.url ?? '').split('?')[0] ?? '';
    const known = fromFrameworkCode(error, path) ?? new AppError('malformed_request', 'The request could not be understood.', { details: [] });
    request.log.info({ code: error.code }, 'refused before routing');
    reply.headers(earlyHeaderValues(early, request.id));
    void reply.code(known.status).type('application/json; charset=utf-8').send(known.toBody());
  };
}

/**
 * A request (or its body) that did not arrive in time: Node's own answer, then the socket closes
 * once it is written (destroyed, not half-closed: a client that never closes its side holds nothing).
 */
export function answerRequestTimeout(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writable) socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  socket.destroySoon();
}

/**
 * Node's HTTP parser rejects a request Fastify never sees (a raw NUL or space in the URL, a
 * malformed header, headers over the size limit): answer with the contract's body, not
 * Fastify's, then close the connection, whose stream can no longer be trusted.
 */
export function clientErrorHandler(early: EarlyHeaders) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      answerRequestTimeout(socket);
      return;
    }
    const body = JSON.stringify(
      new AppError('malformed_request', 'The request is not valid HTTP.', { details: ['the request line and headers must be valid HTTP/1.1'] }).toBody(),
    );
    const headers = {
      ...earlyHeaderValues(early, randomUUID()),
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    };
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 400 Bad Request\r\n${head}\r\n${body}`);
  };
}
