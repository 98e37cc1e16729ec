import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError } from '../../../domain/errors.js';
import { clientHash } from '../../../domain/network/client.js';
import { actorName, OWNER } from '../../../domain/team/actor.js';
import { adminKeyMatches, markFailedKeyAttempt } from '../../../http/admin-auth.js';
import type { ServiceDeps } from '../../../services/context.js';
import { recordAudit } from '../../../services/team/audit.js';
import { actorOfPersonalKey } from '../../../services/team/operators.js';
import { registerStaticAssets } from '../../static-assets.js';
import type { LiveStreams } from '../alerts/live.js';
import { CONSOLE_CSS, CONSOLE_JS } from '../assets.js';
import { type ConsoleKit, FOR_OPERATOR, type Form, HIDDEN, OPEN_QUERY, QUERY_FIELD, safeNext, text } from '../console-kit.js';
import { loginView } from '../inbox/lists-view.js';
import { endSession, readSession, startSession } from './session.js';

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
    const key = text(form, 'key')?.trim();
    // ADMIN_KEY (the owner) or an enabled operator's live personal key.
    const actor = adminKeyMatches(deps.adminKeyHash, key) ? OWNER : key ? await actorOfPersonalKey(deps, key) : undefined;
    const client = clientHash(deps.secret, request.ip);
    if (!actor) {
      // The failed-attempt throttle (shared with the admin API) may hold this answer and make it a 429.
      markFailedKeyAttempt(request);
      await recordAudit(deps.store.db, deps, { actor: 'anonymous', action: 'signin.failed', details: { via: 'key', client } });
      const wrong = new AppError('unauthorized', 'That is not the operator key.');
      const refusal = await deps.abuse.adminThrottle.failed(deps, { clientHash: client, source: 'web_form' }, request.log, wrong);
      for (const [name, value] of Object.entries(refusal.headers)) reply.header(name, value);
      return render(reply, null, 'none', 'Sign in', loginView(refusal.message, next), refusal.status);
    }
    await recordAudit(deps.store.db, deps, { actor, action: 'signin.succeeded', details: { via: 'key', client } });
    startSession(deps, reply, actor);
    request.log.info({ actor: actorName(actor) }, 'console: operator signed in');
    return reply.redirect(next, 303);
  });

  scope.post('/operator/logout', { ...guarded, config: FOR_OPERATOR }, async (request, reply) => {
    const ended = session(request);
    await endSession(deps, reply, ended);
    live.endSession(ended.sid);
    return reply.redirect('/operator/login', 303);
  });
}
