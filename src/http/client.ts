import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { isIdempotencyKey } from '../domain/ids.js';
import type { Source } from '../domain/task.js';
import type { Caller, ServiceDeps } from '../services/context.js';

export function callerFrom(request: FastifyRequest, deps: ServiceDeps, source: Source = 'api'): Caller {
  const raw = request.headers['idempotency-key'];
  let idempotencyKey: string | undefined;
  if (raw !== undefined) {
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (!isIdempotencyKey(key)) {
      throw new AppError('malformed_request', 'The Idempotency-Key header is malformed.', {
        details: ['Idempotency-Key must be 1 to 255 visible ASCII characters'],
      });
    }
    idempotencyKey = key;
  }
  return { clientHash: deps.abuse.clientHash(request.ip), source, idempotencyKey };
}
