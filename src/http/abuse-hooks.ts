import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { ServiceDeps } from '../services/context.js';

/**
 * The HTTP side of abuse control, global because app.ts calls this on the root instance:
 * - reads (route `config.kind === 'read'`) count against READ_LIMIT_PER_MINUTE in memory (see
 *   reads.ts) and carry RateLimit-Limit/Remaining/Reset;
 * - every response carries RateLimit-Policy: the submission policy on task and message routes,
 *   the read policy on everything else (reads, documents, admin, 404s, preflights, early errors).
 * This runs on every request, so the route kind is resolved once, when the route is registered
 * (a per-route hook, no per-request lookup), header values are precomputed, and client hashes of
 * recent addresses are cached.
 */

type Hooks = onRequestHookHandler | onRequestHookHandler[] | undefined;

function withHook(existing: Hooks, hook: onRequestHookHandler): onRequestHookHandler[] {
  return existing === undefined ? [hook] : Array.isArray(existing) ? [hook, ...existing] : [hook, existing];
}

export async function registerAbuseHooks(app: FastifyInstance, deps: ServiceDeps): Promise<void> {
  const { policies, reads } = deps.abuse;
  const readPolicy = policies.read.policy;
  const readLimit = String(reads.limit);
  const behindProxy = deps.config.trustProxy > 0;

  // Without TRUST_PROXY the client is the socket address; skip request.ip's header parsing.
  const hashOf = (request: FastifyRequest): string => deps.abuse.clientHash(behindProxy ? request.ip : (request.raw.socket.remoteAddress ?? ''));

  function readHook(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const verdict = reads.take(hashOf(request));
    if (verdict.remaining < 0) {
      const retry = String(verdict.resetSeconds);
      done(
        new AppError(
          'rate_limited',
          `Limit reached: ${readLimit} reads per minute per client. Retry after ${retry} seconds.`,
          { limit: 'reads_per_minute', retry_after_seconds: verdict.resetSeconds },
          { 'Retry-After': retry, 'RateLimit-Policy': readPolicy, 'RateLimit-Limit': readLimit, 'RateLimit-Remaining': '0', 'RateLimit-Reset': retry },
        ),
      );
      return;
    }
    reply.header('RateLimit-Policy', readPolicy);
    reply.header('RateLimit-Limit', readLimit);
    reply.header('RateLimit-Remaining', String(verdict.remaining));
    reply.header('RateLimit-Reset', String(verdict.resetSeconds));
    done();
  }

  const policyHook = (policy: string): onRequestHookHandler =>
    function setPolicy(_request, reply, done) {
      reply.header('RateLimit-Policy', policy);
      done();
    };
  const taskHook = policyHook(policies.task.policy);
  const messageHook = policyHook(policies.message.policy);
  // The admin API and console enforce the failed-key-attempt limit, not the read limit: advertise that.
  const adminHook = policyHook(deps.abuse.adminThrottle.policy);

  // Runs first among the route's own hooks, so a 401 or a parse error still carries the policy.
  app.addHook('onRoute', (route) => {
    const kind = route.config?.kind;
    const hook = kind === 'read' ? readHook : kind === 'task' ? taskHook : kind === 'message' ? messageHook : kind === 'admin' ? adminHook : undefined;
    if (hook) route.onRequest = withHook(route.onRequest as Hooks, hook);
  });

  // Everything else — documents, admin, 404s, CORS preflights — gets the read policy.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('ratelimit-policy')) reply.header('RateLimit-Policy', readPolicy);
    done(null, payload);
  });

  app.addHook('onClose', async () => {
    await reads.stop();
  });
}
