import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { sha256 } from '../domain/canonical.js';
import { AppError } from '../domain/errors.js';
import { clientHash } from '../domain/network/client.js';
import { type Actor, assertRole, OWNER, type Role } from '../domain/team/actor.js';
import { PERSONAL_KEY_PATTERN } from '../domain/team/team-schemas.js';
import type { ServiceDeps } from '../services/context.js';
import { actorOfPersonalKey } from '../services/team/operators.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The role an admin route or console action needs (contract "A team of operators"). Declared
     * on every such route, enforced by one hook: requireAdmin here, the console's session guard
     * there. test/team.roles.security.test.ts walks the route table for routes without one.
     */
    role?: Role;
  }
  interface FastifyRequest {
    /** Who is acting, once the key or session was checked. */
    actor?: Actor;
  }
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
 * The actor a bearer token names: the owner for ADMIN_KEY, the operator of a live personal key
 * (looked up in the store on every request, so revocation and disabling are immediate everywhere).
 */
async function actorOfToken(deps: ServiceDeps, token: string | undefined): Promise<Actor | undefined> {
  if (adminKeyMatches(deps.adminKeyHash, token)) return OWNER;
  return token === undefined ? undefined : actorOfPersonalKey(deps, token);
}

/**
 * onRequest hook of the admin API: 401 `unauthorized` (never with WWW-Authenticate) without a
 * key, then 403 `forbidden` unless the key's role covers the route's declared `role`. A right key
 * passes before anything else is looked at; a wrong one goes through the failed-attempt throttle
 * (abuse/admin-throttle.ts), which may answer 429 or 403 instead.
 */
export function requireAdmin(deps: ServiceDeps) {
  return async (request: FastifyRequest): Promise<void> => {
    const token = bearerToken(request);
    const actor = await actorOfToken(deps, token);
    if (actor) {
      request.actor = actor;
      return assertRole(actor, request.routeOptions.config.role);
    }
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
    // A personal key is only known good after its lookup: its request is logged (a failed one is marked).
    return token !== undefined && !PERSONAL_KEY_PATTERN.test(token) && !adminKeyMatches(expectedHash, token);
  };
}

/** Who is acting on a route behind requireAdmin or the console's session guard (both set it). */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new AppError('unauthorized', 'Sign in first.');
  return request.actor;
}
