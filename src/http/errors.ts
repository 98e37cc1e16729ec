import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorBody } from '../domain/errors.js';
import { asStoreUnavailable, type StoreFaults } from '../store/faults.js';
import { fromFrameworkCode } from './framework-errors.js';

/** Fastify's own failures (parsing, size, media type, schema) mapped to the contract's codes. */
export function fromFastify(error: FastifyError): AppError | undefined {
  if (error.validation) {
    const details = error.validation.map((v) => {
      const field =
        v.instancePath.replace(/^\//, '') || String((v.params as { missingProperty?: string }).missingProperty ?? error.validationContext ?? 'request');
      return `${field} ${v.message ?? 'is invalid'}`;
    });
    return new AppError('malformed_request', 'The request has malformed parameters; see details.', { details });
  }
  const framework = fromFrameworkCode(error);
  if (framework) return framework;
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON|prototype/i.test(error.message))) {
    return new AppError('invalid_json', 'The request body is not valid JSON.');
  }
  return undefined;
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send(error.toBody() satisfies ErrorBody);
}

/**
 * The contract's error for any failure a request ran into (logged when it is the service's
 * fault): the app's error handler answers with it, and so does the console for its JSON requests.
 */
export function contractError(error: FastifyError, request: FastifyRequest, faults: Pick<StoreFaults, 'record'>): AppError {
  // A store that stops answering is a 503 with Retry-After, never a 500 naming internals. A body
  // the client abandoned (its connection reset while Fastify read it: ECONNRESET "aborted", given
  // a 4xx status by Fastify) is the client's doing, not a store fault: it must not turn health 503.
  const known = error instanceof AppError ? error : (fromFastify(error) ?? (isClientStatus(error.statusCode) ? undefined : asStoreUnavailable(faults, error)));
  if (known) {
    if (known.status >= 500) request.log.error({ err: error }, known.message);
    return known;
  }
  if (isClientStatus(error.statusCode)) {
    request.log.info({ err: error }, 'client error');
    return new AppError('malformed_request', 'The request could not be understood.', { details: [] });
  }
  request.log.error({ err: error }, 'unhandled error');
  return new AppError('internal_error', `Something went wrong on our side. Request id: ${request.id}.`);
}

export function installErrorHandler(app: FastifyInstance, faults: Pick<StoreFaults, 'record'>): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => sendError(reply, contractError(error, request, faults)));
}

function isClientStatus(status: number | undefined): boolean {
  return typeof status === 'number' && status >= 400 && status < 500;
}
