import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorBody } from '../domain/errors.js';

/** Fastify's own failures (parsing, size, media type, schema) mapped to the contract's codes. */
export function fromFastify(error: FastifyError): AppError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is over the 64 KB limit (10 MB for the admin import).');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
    default:
      break;
  }
  if (error.validation) {
    const details = error.validation.map((v) => {
      const field = v.instancePath.replace(/^\//, '') || String((v.params as { missingProperty?: string }).missingProperty ?? error.validationContext ?? 'request');
      return `${field} ${v.message ?? 'is invalid'}`;
    });
    return new AppError('malformed_request', 'The request has malformed parameters; see details.', { details });
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON|prototype/i.test(error.message))) {
    return new AppError('invalid_json', 'The request body is not valid JSON.');
  }
  return undefined;
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toBody() satisfies ErrorBody);
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = error instanceof AppError ? error : fromFastify(error);
    if (known) {
      if (known.status >= 500) request.log.error({ err: error }, known.message);
      return sendError(reply, known);
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      request.log.info({ err: error }, 'client error');
      return sendError(reply, new AppError('malformed_request', 'The request could not be understood.', { details: [] }));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new AppError('internal_error', `Something went wrong on our side. Request id: ${request.id}.`));
  });
}
