import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { iso } from '../../domain/time.js';
import type { ServiceDeps } from '../../services/context.js';
import { openToken, signToken } from '../../services/signed-token.js';
import { isSessionRevoked, revokeSession } from '../../store/sessions-repo.js';

/**
 * The console's session: a signed token (services/signed-token.ts) holding a random session id and
 * an expiry, HMAC-signed with a key derived from the server secret AND the operator key's hash, so
 * changing ADMIN_KEY signs every operator out. HttpOnly, SameSite=Strict, Path=/operator, Secure
 * when BASE_URL is https. Each session has its own CSRF token, required in every POST form.
 * Signing out revokes the session id in the store (until it would have expired).
 */

export const SESSION_COOKIE = 'hts_operator';
export const SESSION_HOURS = 12;
const PATH = '/operator';

export interface Session {
  sid: string;
  /** Expiry, unix seconds. */
  exp: number;
  csrf: string;
}

function sessionKey(deps: ServiceDeps): Buffer {
  return createHmac('sha256', deps.secret).update('operator-session\n').update(deps.adminKeyHash).digest();
}

const SESSION_SCOPE = 'operator-session';

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function csrfFor(deps: ServiceDeps, sid: string): string {
  return createHmac('sha256', sessionKey(deps)).update(`csrf\n${sid}`).digest('base64url');
}

/** Reads one cookie by name from the Cookie header (no dependency needed for one cookie). */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function verifiedSession(deps: ServiceDeps, request: FastifyRequest): Session | null {
  const cookie = readCookie(request, SESSION_COOKIE);
  const text = cookie === undefined ? null : openToken(sessionKey(deps), SESSION_SCOPE, cookie);
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as { sid?: unknown; exp?: unknown };
    if (typeof parsed.sid !== 'string' || typeof parsed.exp !== 'number') return null;
    if (parsed.exp * 1000 <= deps.clock.now().getTime()) return null;
    return { sid: parsed.sid, exp: parsed.exp, csrf: csrfFor(deps, parsed.sid) };
  } catch {
    return null;
  }
}

/** The signed, unexpired session of the request, unless it was signed out. */
export async function readSession(deps: ServiceDeps, request: FastifyRequest): Promise<Session | null> {
  const session = verifiedSession(deps, request);
  if (!session) return null;
  return (await isSessionRevoked(deps.store.db, session.sid)) ? null : session;
}

function cookieAttributes(deps: ServiceDeps, maxAgeSeconds: number): string {
  const secure = deps.config.baseUrl.startsWith('https:') ? '; Secure' : '';
  return `; Path=${PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

export function startSession(deps: ServiceDeps, reply: FastifyReply): Session {
  const sid = randomBytes(18).toString('base64url');
  const maxAge = SESSION_HOURS * 3600;
  const exp = Math.floor(deps.clock.now().getTime() / 1000) + maxAge;
  const token = signToken(sessionKey(deps), SESSION_SCOPE, JSON.stringify({ sid, exp }));
  reply.header('Set-Cookie', `${SESSION_COOKIE}=${token}${cookieAttributes(deps, maxAge)}`);
  return { sid, exp, csrf: csrfFor(deps, sid) };
}

/** Signs out: clears the cookie, and revokes the session so a copy of the cookie stops working too. */
export async function endSession(deps: ServiceDeps, reply: FastifyReply, session: Session): Promise<void> {
  await revokeSession(deps.store.db, session.sid, iso(new Date(session.exp * 1000)));
  reply.header('Set-Cookie', `${SESSION_COOKIE}=${cookieAttributes(deps, 0)}`);
}

export function csrfMatches(session: Session, token: unknown): boolean {
  return typeof token === 'string' && safeEqual(token, session.csrf);
}
