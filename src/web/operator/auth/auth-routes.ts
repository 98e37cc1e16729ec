import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { AppError } from '../../../domain/errors.js';
import { clientHash } from '../../../domain/network/client.js';
import { ADMIN_CREDENTIAL, actorName, OWNER, type SignedIn } from '../../../domain/team/actor.js';
import { adminKeyMatches, markFailedKeyAttempt } from '../../../http/admin-auth.js';
import type { ServiceDeps } from '../../../services/context.js';
import { recordAudit } from '../../../services/team/audit.js';
import { signInWithKey } from '../../../services/team/operators.js';
import { failedSignIn } from '../../../services/team/signin-failures.js';
import { registerStaticAssets } from '../../static-assets.js';
import type { LiveStreams } from '../alerts/live.js';
import { CONSOLE_CSS, CONSOLE_JS } from '../assets.js';
import { type ConsoleKit, FOR_OPERATOR, type Form, HIDDEN, OPEN_QUERY, QUERY_FIELD, safeNext, text } from '../console-kit.js';
import { loginView } from '../inbox/lists-view.js';
import { endSession, readSession, startSession } from './session.js';

/**
 * Whether a sign-in POST comes from the console's own page, or from no browser at all. A current
 * browser says where a request comes from in `Sec-Fetch-Site`, which no page can set: only
 * `same-origin` passes (the console's pages send `Origin: null` with it, as their Referrer-Policy
 * is no-referrer). A browser without it names the sending page in `Origin`, which must be the
 * console's (BASE_URL's origin, or the host the request was sent to: the same unless a proxy or
 * a test renames it); `null` does not pass there. A request with neither header is not a browser's
 * (curl, a script) and cannot sign a victim's browser in, so it passes.
 */
function fromConsoleOrNoBrowser(deps: ServiceDeps, request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  const origin = request.headers.origin;
  if (origin === undefined || origin === new URL(deps.config.baseUrl).origin) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** The console's assets, sign-in and sign-out (which also ends the session's live event streams). */
export function registerAuthRoutes(scope: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit, live: LiveStreams): void {
  const { render, session, guarded } = kit;
  registerStaticAssets(scope, [CONSOLE_CSS, CONSOLE_JS]);

  const loginQuery = { ...HIDDEN, querystring: Type.Object({ next: QUERY_FIELD }, OPEN_QUERY) };
  scope.withTypeProvider<TypeBoxTypeProvider>().get('/operator/login', { config: { kind: 'admin' }, schema: loginQuery }, async (request, reply) => {
    const next = safeNext(text(request.query, 'next'));
    if (await readSession(deps, request)) return reply.redirect(next, 303);
    return render(reply, null, 'none', 'Sign in', loginView(null, next));
  });

  // Counted as a read so that guessing keys runs into the per-client read limit.
  scope.post('/operator/login', { config: { kind: 'read' }, schema: HIDDEN }, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const next = safeNext(text(form, 'next'));
    // Login CSRF: a page elsewhere must not sign this browser in to someone else's account.
    if (!fromConsoleOrNoBrowser(deps, request))
      return render(reply, null, 'none', 'Sign in', loginView('Sign in from the console’s own sign-in page.', next), 403);
    const key = text(form, 'key')?.trim();
    // ADMIN_KEY (the owner) or an enabled operator's live personal key.
    const signedIn: SignedIn | undefined = adminKeyMatches(deps.adminKeyHash, key)
      ? { actor: OWNER, credential: ADMIN_CREDENTIAL }
      : key
        ? await signInWithKey(deps, key)
        : undefined;
    const client = clientHash(deps.secret, request.ip);
    if (!signedIn) {
      // The failed-attempt throttle (shared with the admin API) may hold this answer and make it a 429.
      markFailedKeyAttempt(request);
      const wrong = new AppError('unauthorized', 'That is not the operator key.');
      const refusal = await failedSignIn(deps, { clientHash: client, via: 'key', refusal: wrong }, request.log);
      for (const [name, value] of Object.entries(refusal.headers)) reply.header(name, value);
      return render(reply, null, 'none', 'Sign in', loginView(refusal.message, next), refusal.status);
    }
    await recordAudit(deps.store.db, deps, { actor: signedIn.actor, action: 'signin.succeeded', details: { via: 'key', client } });
    startSession(deps, reply, signedIn);
    request.log.info({ actor: actorName(signedIn.actor) }, 'console: operator signed in');
    return reply.redirect(next, 303);
  });

  scope.post('/operator/logout', { ...guarded, config: FOR_OPERATOR }, async (request, reply) => {
    const ended = session(request);
    await endSession(deps, reply, ended);
    live.endSession(ended.sid);
    return reply.redirect('/operator/login', 303);
  });
}
