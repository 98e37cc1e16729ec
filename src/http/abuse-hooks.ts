import type { IncomingMessage } from 'node:http';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isSigned } from '../abuse/agent-signatures.js';
import { invitation, type Policies } from '../abuse/limits.js';
import type { VerifiedAgent } from '../domain/caller.js';
import { AppError } from '../domain/errors.js';
import type { ServiceDeps } from '../services/context.js';
import { clientAddressOf } from './client.js';
import type { RequestStep, ResponseStep } from './pipeline.js';
import { isDryRun } from './routes/public.js';

const verifications = new WeakMap<IncomingMessage, Promise<VerifiedAgent>>();

/**
 * A signed request's verification, started once whichever asks first: the status read's fast lane
 * (lanes/fast-reads.ts), which may then hand the request to the framework, or the `signed` hook.
 * Verifying twice would refuse the request's own nonce as a replay.
 */
export function verificationOf(deps: ServiceDeps, request: IncomingMessage): Promise<VerifiedAgent> {
  let verification = verifications.get(request);
  if (verification === undefined) {
    verification = deps.abuse.agents.verify({ method: request.method ?? 'GET', url: request.url ?? '/', rawHeaders: request.rawHeaders });
    verifications.set(request, verification);
  }
  return verification;
}

/**
 * The HTTP side of abuse control, as steps of the request pipeline (pipeline.ts):
 * - reads (route `config.kind === 'read'`) count against READ_LIMIT_PER_MINUTE in memory (see
 *   reads.ts) and carry RateLimit-Limit/Remaining/Reset;
 * - every response carries RateLimit-Policy: the submission policy on task and message routes,
 *   the operator-key throttle's on admin routes, the read policy on everything else (reads,
 *   documents, 404s, preflights, early errors), each item naming its tier (`comment="address"`
 *   or `comment="verified"`).
 * The policy is set when the request arrives, before the route's own hooks, so a 401 or a parse
 * error still carries it. This runs on every request: header values are precomputed, and client
 * hashes of recent addresses are cached.
 *
 * A request carrying a Web Bot Auth signature (docs/verified-agents.md) is left to `signed`, a
 * hook that runs after the pipeline: it verifies the signature (400 invalid_signature when it
 * does not), makes the agent's key the client, and applies the same steps with the verified
 * policies. An unsigned request never waits for it.
 */
export function abuseSteps(
  app: FastifyInstance,
  deps: ServiceDeps,
): { request: RequestStep; response: ResponseStep; signed: (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void } {
  const { reads } = deps.abuse;
  const readLimit = String(reads.limit);
  const addressPolicy = deps.abuse.policies.read.policy;
  // The admin API and console enforce the failed-key-attempt limit, not the read limit: advertise that.
  const adminPolicy = deps.abuse.adminThrottle.policy;

  const addressOf = clientAddressOf(deps.config.trustProxy);

  function countRead(hash: string, policies: Policies, reply: FastifyReply): AppError | undefined {
    const policy = policies.read.policy;
    const verdict = reads.take(hash);
    if (verdict.remaining < 0) {
      const retry = String(verdict.resetSeconds);
      return new AppError(
        'rate_limited',
        `Limit reached: ${readLimit} reads per minute per client. Retry after ${retry} seconds.`,
        { limit: 'reads_per_minute', retry_after_seconds: verdict.resetSeconds },
        {
          'Retry-After': retry,
          'RateLimit-Policy': policy,
          'RateLimit-Limit': readLimit,
          'RateLimit-Remaining': '0',
          'RateLimit-Reset': retry,
          ...invitation(policies.read, policies.read.quotas[0]!, Number(readLimit)),
        },
      );
    }
    reply.header('ratelimit-policy', policy);
    reply.header('ratelimit-limit', readLimit);
    reply.header('ratelimit-remaining', String(verdict.remaining));
    reply.header('ratelimit-reset', String(verdict.resetSeconds));
    return undefined;
  }

  function step(request: FastifyRequest, hash: () => string, policies: Policies, reply: FastifyReply, route: FastifyContextConfig): AppError | undefined {
    switch (route.kind) {
      case 'read':
        return countRead(hash(), policies, reply);
      case 'task':
        // A dry run is a read (contract "Know before you ask"): it cannot be used to grind the checks.
        if (isDryRun(request.query)) return countRead(hash(), policies, reply);
        reply.header('ratelimit-policy', policies.task.policy);
        return undefined;
      case 'message':
        reply.header('ratelimit-policy', policies.message.policy);
        return undefined;
      case 'admin':
        reply.header('ratelimit-policy', adminPolicy);
        return undefined;
      default:
        return undefined;
    }
  }

  app.addHook('onClose', async () => {
    await reads.stop();
  });

  return {
    request: (request, reply, route) => {
      if (isSigned(request.headers)) return undefined;
      return step(request, () => deps.abuse.clientHash(addressOf(request.raw)), deps.abuse.policies, reply, route);
    },
    // Everything else — documents, 404s, CORS preflights, errors before routing — gets the read policy.
    response: (request, reply) => {
      if (!reply.hasHeader('ratelimit-policy')) reply.header('ratelimit-policy', request.agent === undefined ? addressPolicy : deps.abuse.verified.read.policy);
    },
    // Callback-style, and synchronous for an unsigned request: an async hook costs a promise on every request.
    signed: (request, reply, done) => {
      if (!isSigned(request.headers)) return done();
      const route = request.routeOptions.config ?? {};
      verificationOf(deps, request.raw).then(
        (agent) => {
          request.agent = agent;
          done(step(request, () => deps.abuse.agentHash(agent.keyId), deps.abuse.verified, reply, route));
        },
        (error: Error) => done(error),
      );
    },
  };
}
