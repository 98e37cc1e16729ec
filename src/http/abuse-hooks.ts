import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { ServiceDeps } from '../services/context.js';
import { clientAddressOf } from './client.js';
import type { RequestStep, ResponseStep } from './pipeline.js';
import { isDryRun } from './routes/public.js';

/**
 * The HTTP side of abuse control, as steps of the request pipeline (pipeline.ts):
 * - reads (route `config.kind === 'read'`) count against READ_LIMIT_PER_MINUTE in memory (see
 *   reads.ts) and carry RateLimit-Limit/Remaining/Reset;
 * - every response carries RateLimit-Policy: the submission policy on task and message routes,
 *   the operator-key throttle's on admin routes, the read policy on everything else (reads,
 *   documents, 404s, preflights, early errors).
 * The policy is set when the request arrives, before the route's own hooks, so a 401 or a parse
 * error still carries it. This runs on every request: header values are precomputed, and client
 * hashes of recent addresses are cached.
 */
export function abuseSteps(app: FastifyInstance, deps: ServiceDeps): { request: RequestStep; response: ResponseStep } {
  const { policies, reads } = deps.abuse;
  const readPolicy = policies.read.policy;
  const readLimit = String(reads.limit);
  const taskPolicy = policies.task.policy;
  const messagePolicy = policies.message.policy;
  // The admin API and console enforce the failed-key-attempt limit, not the read limit: advertise that.
  const adminPolicy = deps.abuse.adminThrottle.policy;

  const addressOf = clientAddressOf(deps.config.trustProxy);
  const hashOf = (request: FastifyRequest): string => deps.abuse.clientHash(addressOf(request.raw));

  function countRead(request: FastifyRequest, reply: FastifyReply): AppError | undefined {
    const verdict = reads.take(hashOf(request));
    if (verdict.remaining < 0) {
      const retry = String(verdict.resetSeconds);
      return new AppError(
        'rate_limited',
        `Limit reached: ${readLimit} reads per minute per client. Retry after ${retry} seconds.`,
        { limit: 'reads_per_minute', retry_after_seconds: verdict.resetSeconds },
        { 'Retry-After': retry, 'RateLimit-Policy': readPolicy, 'RateLimit-Limit': readLimit, 'RateLimit-Remaining': '0', 'RateLimit-Reset': retry },
      );
    }
    reply.header('ratelimit-policy', readPolicy);
    reply.header('ratelimit-limit', readLimit);
    reply.header('ratelimit-remaining', String(verdict.remaining));
    reply.header('ratelimit-reset', String(verdict.resetSeconds));
    return undefined;
  }

  app.addHook('onClose', async () => {
    await reads.stop();
  });

  return {
    request: (request, reply, route) => {
      switch (route.kind) {
        case 'read':
          return countRead(request, reply);
        case 'task':
          // A dry run is a read (contract "Know before you ask"): it cannot be used to grind the checks.
          if (isDryRun(request.query)) return countRead(request, reply);
          reply.header('ratelimit-policy', taskPolicy);
          return undefined;
        case 'message':
          reply.header('ratelimit-policy', messagePolicy);
          return undefined;
        case 'admin':
          reply.header('ratelimit-policy', adminPolicy);
          return undefined;
        default:
          return undefined;
      }
    },
    // Everything else — documents, 404s, CORS preflights, errors before routing — gets the read policy.
    response: (_request, reply) => {
      if (!reply.hasHeader('ratelimit-policy')) reply.header('ratelimit-policy', readPolicy);
    },
  };
}
