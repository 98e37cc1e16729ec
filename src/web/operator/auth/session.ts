import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Actor, ADMIN_CREDENTIAL, type Credential, type SignedIn } from '../../../domain/team/actor.js';
import { iso } from '../../../domain/time.js';
import type { ServiceDeps } from '../../../services/context.js';
import { openToken, signToken } from '../../../services/runtime/signed-token.js';
import { actorOfSession, signOut } from '../../../services/team/operators.js';
import { isSessionRevoked } from '../../../store/team/sessions-repo.js';

/**
 * The console's session: a signed token (services/runtime/signed-token.ts) holding a random session id and
 * an expiry, HMAC-signed with a key derived from the server secret AND the operator key's hash, so
 * changing ADMIN_KEY signs every operator out. HttpOnly, SameSite=Strict, Path=/operator, Secure
 * when BASE_URL is https. Each session has its own CSRF token, required in every POST form.
 * Signing out revokes the session id in the store (until it would have expired).
 *
 * A session also names what it was opened with (`via`: ADMIN_KEY, a personal key's id, a
 * passkey's id), read in the store on every request with the operator: revoking the key or
 * removing the passkey ends it at once on every instance. A cookie from before that field (signed
 * by an older version) names nothing, and is refused: its holder signs in once more.
 */

export const SESSION_COOKIE = 'hts_operator';
export const SESSION_HOURS = 12;
const PATH = '/operator';

export interface Session {
  sid: string;
  /** Expiry, unix seconds. */
  exp: number;
  csrf: string;
  /** Who signed in: the owner (ADMIN_KEY) or an operator, whose role is read anew on every request. */
  actor: Actor;
  /** What the session was opened with. */
  credential: Credential;
}

function sessionKey(deps: ServiceDeps): Buffer {
  return createHmac('sha256', deps.secret).update('operator-session\n').update(deps.adminKeyHash).digest();
}

const SESSION_SCOPE = 'operator-session';
/** A session's payload names its passkey, whose credential id may be 1,024 characters (passkeys.ts). */
const MAX_PAYLOAD = 2048;

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

interface SignedSession {
  sid: string;
  exp: number;
  /** The operator who signed in; absent for the owner (ADMIN_KEY), as in sessions from before teams. */
  op?: string;
  /** What it was opened with: `admin`, `key:<key_id>` or `passkey:<credential_id>`. */
  via: string;
}

function viaOf(credential: Credential): string {
  return credential.kind === 'admin' ? 'admin' : `${credential.kind}:${credential.id}`;
}

function credentialOf(via: string): Credential | undefined {
  if (via === 'admin') return ADMIN_CREDENTIAL;
  const colon = via.indexOf(':');
  const kind = via.slice(0, colon);
  const id = via.slice(colon + 1);
  return colon > 0 && id !== '' && (kind === 'key' || kind === 'passkey') ? { kind, id } : undefined;
}

function verifiedSession(deps: ServiceDeps, request: FastifyRequest): SignedSession | null {
  const cookie = readCookie(request, SESSION_COOKIE);
  const text = cookie === undefined ? null : openToken(sessionKey(deps), SESSION_SCOPE, cookie, MAX_PAYLOAD);
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as { sid?: unknown; exp?: unknown; op?: unknown; via?: unknown };
    if (typeof parsed.sid !== 'string' || typeof parsed.exp !== 'number') return null;
    if (parsed.op !== undefined && typeof parsed.op !== 'string') return null;
    // A session that does not say what it was opened with cannot be ended with it: refused.
    if (typeof parsed.via !== 'string') return null;
    if (parsed.exp * 1000 <= deps.clock.now().getTime()) return null;
    return { sid: parsed.sid, exp: parsed.exp, via: parsed.via, ...(parsed.op !== undefined ? { op: parsed.op } : {}) };
  } catch {
    return null;
  }
}

/**
 * The signed, unexpired session of the request, unless it was signed out, its operator was
 * disabled, or the key it was opened with revoked (or its passkey removed) since: all read from the
 * store on every request, so they take effect on every instance.
 */
export async function readSession(deps: ServiceDeps, request: FastifyRequest): Promise<Session | null> {
  const signed = verifiedSession(deps, request);
  const credential = signed ? credentialOf(signed.via) : undefined;
  if (!signed || !credential) return null;
  const [revoked, actor] = await Promise.all([isSessionRevoked(deps.store.db, signed.sid), actorOfSession(deps, signed.op, credential)]);
  if (revoked || !actor) return null;
  return { sid: signed.sid, exp: signed.exp, csrf: csrfFor(deps, signed.sid), actor, credential };
}

function cookieAttributes(deps: ServiceDeps, maxAgeSeconds: number): string {
  const secure = deps.config.baseUrl.startsWith('https:') ? '; Secure' : '';
  return `; Path=${PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

export function startSession(deps: ServiceDeps, reply: FastifyReply, { actor, credential }: SignedIn): Session {
  const sid = randomBytes(18).toString('base64url');
  const maxAge = SESSION_HOURS * 3600;
  const exp = Math.floor(deps.clock.now().getTime() / 1000) + maxAge;
  const signed: SignedSession = { sid, exp, via: viaOf(credential), ...(actor.kind === 'operator' ? { op: actor.operatorId } : {}) };
  const token = signToken(sessionKey(deps), SESSION_SCOPE, JSON.stringify(signed));
  reply.header('Set-Cookie', `${SESSION_COOKIE}=${token}${cookieAttributes(deps, maxAge)}`);
  return { sid, exp, csrf: csrfFor(deps, sid), actor, credential };
}

/** Signs out: clears the cookie, and revokes the session so a copy of the cookie stops working too. */
export async function endSession(deps: ServiceDeps, reply: FastifyReply, session: Session): Promise<void> {
  await signOut(deps, session.actor, session.sid, iso(new Date(session.exp * 1000)));
  reply.header('Set-Cookie', `${SESSION_COOKIE}=${cookieAttributes(deps, 0)}`);
}

export function csrfMatches(session: Session, token: unknown): boolean {
  return typeof token === 'string' && safeEqual(token, session.csrf);
}
