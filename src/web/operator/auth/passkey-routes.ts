import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { AppError } from '../../../domain/errors.js';
import { html } from '../../../domain/html.js';
import { clientHash } from '../../../domain/network/client.js';
import { actorName, type SignedIn } from '../../../domain/team/actor.js';
import { markFailedKeyAttempt } from '../../../http/admin-auth.js';
import { sendError } from '../../../http/errors.js';
import type { ServiceDeps } from '../../../services/context.js';
import { recordAudit } from '../../../services/team/audit.js';
import { authenticationOptions, invitedOperator, registerPasskey, registrationOptions, signInWithPasskey } from '../../../services/team/passkeys.js';
import { failedSignIn } from '../../../services/team/signin-failures.js';
import { registerStaticAssets } from '../../static-assets.js';
import { type ConsoleKit, HIDDEN, safeNext } from '../console-kit.js';
import { PASSKEY_JS, PASSKEY_SCRIPTS, webauthnBrowserBundle } from './passkey-assets.js';
import { startSession } from './session.js';

/**
 * Invites and passkeys in the console: the invite page and its registration ceremony, and the
 * passkey sign-in. None needs a session (they are how one starts): the invite token, the stored
 * single-use challenge and the Origin check stand in for the CSRF token of signed-in forms.
 */

export function registerPasskeyRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const origin = new URL(deps.config.baseUrl).origin;
  // Loaded on first request, then kept: a static file of the installed package.
  let bundle: string | undefined;
  const open = { config: { kind: 'none' as const }, schema: HIDDEN };
  scope.get('/operator/assets/webauthn.js', open, async (_request, reply) => {
    bundle ??= webauthnBrowserBundle();
    return reply.header('Cache-Control', 'no-cache').type('text/javascript; charset=utf-8').send(bundle);
  });
  registerStaticAssets(scope, [PASSKEY_JS]);

  /** The ceremonies answer JSON, and only to the console's own pages: a cross-site request is 403. */
  const ceremony = { config: { kind: 'read' as const }, schema: HIDDEN };
  const sameOrigin = (request: FastifyRequest): void => {
    if (request.headers.origin !== origin) throw new AppError('forbidden', 'Passkey requests come from the console’s own pages only.');
  };
  const fail = (reply: FastifyReply, error: unknown) => {
    if (error instanceof AppError) return sendError(reply, error);
    throw error;
  };
  const signedIn = async (request: FastifyRequest, reply: FastifyReply, outcome: SignedIn, next: string) => {
    startSession(deps, reply, outcome);
    request.log.info({ actor: actorName(outcome.actor) }, 'console: operator signed in with a passkey');
    return reply.send({ next });
  };

  const inviteParams = { ...HIDDEN, params: Type.Object({ token: Type.String() }) };
  scope.get('/operator/invite/:token', { config: { kind: 'read' }, schema: inviteParams }, async (request, reply) => {
    const operator = await invitedOperator(deps, request.params.token);
    const base = `/operator/invite/${request.params.token}`;
    const body = html`<div class="login card">
      <h1>Welcome, ${operator.name}</h1>
      <p class="sub">You were invited as ${operator.role} (${operator.email}). Register a passkey on this device to sign in to the console. The link works once, for 24 hours.</p>
      <div class="flash error" role="alert" id="passkey-status" hidden></div>
      <button class="btn" type="button" data-passkey-register="${base}" hidden>Register a passkey</button>
      <noscript><p>Registering a passkey needs JavaScript.</p></noscript>
    </div>${PASSKEY_SCRIPTS}`;
    return kit.render(reply, null, 'none', 'Register a passkey', body);
  });
  scope.post('/operator/invite/:token/options', { ...ceremony, schema: inviteParams }, async (request, reply) => {
    try {
      sameOrigin(request);
      return reply.send(await registrationOptions(deps, request.params.token));
    } catch (error) {
      return fail(reply, error);
    }
  });
  scope.post('/operator/invite/:token/register', { ...ceremony, schema: inviteParams }, async (request, reply) => {
    try {
      sameOrigin(request);
      return signedIn(request, reply, await registerPasskey(deps, request.params.token, request.body), '/operator');
    } catch (error) {
      return fail(reply, error);
    }
  });

  scope.post('/operator/passkey/options', ceremony, async (request, reply) => {
    try {
      sameOrigin(request);
      return reply.send(await authenticationOptions(deps));
    } catch (error) {
      return fail(reply, error);
    }
  });
  scope.post('/operator/passkey/signin', ceremony, async (request, reply) => {
    try {
      sameOrigin(request);
    } catch (error) {
      return fail(reply, error);
    }
    const client = clientHash(deps.secret, request.ip);
    const outcome = await signInWithPasskey(deps, request.body);
    const next = safeNext(typeof (request.body as { next?: unknown } | null)?.next === 'string' ? (request.body as { next: string }).next : undefined);
    if ('actor' in outcome) {
      await recordAudit(deps.store.db, deps, { actor: outcome.actor, action: 'signin.succeeded', details: { via: 'passkey', client } });
      return signedIn(request, reply, outcome, next);
    }
    markFailedKeyAttempt(request);
    const refusal = await failedSignIn(deps, { clientHash: client, via: 'passkey', refusal: outcome.refusal, operatorId: outcome.operatorId }, request.log);
    for (const [name, value] of Object.entries(refusal.headers)) reply.header(name, value);
    return sendError(reply, refusal);
  });
}
