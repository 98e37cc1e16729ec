import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { clientHash } from '../domain/client.js';
import { AppError } from '../domain/errors.js';
import type { ServiceDeps } from '../services/context.js';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export function adminKeyMatches(expectedHash: Buffer, candidate: string | undefined): boolean {
  if (!candidate) return false;
  return timingSafeEqual(sha256(candidate), expectedHash);
}

/** The bearer token of a request, if any. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * onRequest hook of the admin API: 401 `unauthorized` (never with WWW-Authenticate) without the
 * key. The right key passes before anything else is looked at; a wrong one goes through the
 * failed-attempt throttle (abuse/admin-throttle.ts), which may answer 429 or 403 instead.
 */
export function requireAdmin(deps: ServiceDeps) {
  return async (request: FastifyRequest): Promise<void> => {
    const token = bearerToken(request);
    if (adminKeyMatches(deps.adminKeyHash, token)) return;
    const unauthorized = new AppError('unauthorized', 'This endpoint needs the operator key: Authorization: Bearer <ADMIN_KEY>.');
    // No key at all is not a guess: nothing to count.
    if (token === undefined) throw unauthorized;
    markFailedKeyAttempt(request);
    throw await deps.abuse.adminThrottle.failed(deps, { clientHash: clientHash(deps.secret, request.ip), source: 'api' }, request.log, unauthorized);
  };
}

const FAILED_KEY = Symbol('failed operator-key attempt');
type Marked = { [FAILED_KEY]?: true };

/** Marks a request as a failed key attempt: its request log lines are left out (see quietRequestLog). */
export function markFailedKeyAttempt(request: FastifyRequest): void {
  (request.raw as Marked)[FAILED_KEY] = true;
}

/**
 * Fastify's disableRequestLogging: the per-request info lines are skipped for failed key attempts
 * (a wrong bearer on an admin path is known at once; a console sign-in once its form is read), so
 * guessing cannot flood the log. The throttle writes rate-limited warn lines instead.
 */
export function quietRequestLog(expectedHash: Buffer) {
  return (request: FastifyRequest): boolean => {
    if ((request.raw as Marked)[FAILED_KEY]) return true;
    if (!request.url.startsWith('/api/v1/admin/') && !(request.method === 'PATCH' && request.url.startsWith('/api/v1/tasks/'))) return false;
    const token = bearerToken(request);
    return token !== undefined && !adminKeyMatches(expectedHash, token);
  };
}
