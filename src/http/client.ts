import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyRequest } from 'fastify';
import type { VerifiedAgent } from '../domain/caller.js';
import { AppError } from '../domain/errors.js';
import { isIdempotencyKey } from '../domain/ids.js';
import type { Source } from '../domain/tasks/task.js';
import type { Caller, ServiceDeps } from '../services/context.js';

export function callerFrom(request: FastifyRequest, deps: ServiceDeps, source: Source = 'api'): Caller {
  const raw = request.headers['idempotency-key'];
  let idempotencyKey: string | undefined;
  if (raw !== undefined) {
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (!isIdempotencyKey(key)) {
      throw new AppError('malformed_request', 'The Idempotency-Key header is malformed.', {
        details: ['Idempotency-Key must be 1 to 255 visible ASCII characters'],
      });
    }
    idempotencyKey = key;
  }
  // A verified agent is its key (abuse-hooks.ts verified the signature when the request arrived).
  const agent = request.agent;
  if (agent !== undefined) return { clientHash: deps.abuse.agentHash(agent.keyId), agent, source, idempotencyKey };
  return { clientHash: deps.abuse.clientHash(request.ip), networks: deps.abuse.networks(request.ip), source, idempotencyKey };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The agent whose Web Bot Auth signature verified (abuse-hooks.ts); undefined when unsigned. */
    agent?: VerifiedAgent | undefined;
  }
}

/** TRUST_PROXY=N: the client is the address N hops back in X-Forwarded-For (Fastify's trustProxy). */
export function trustsProxyHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

/**
 * The client's address from the raw request, as Fastify's `request.ip` gives it (the same
 * library and trust function), for code that runs without a Fastify request or on every request:
 * without TRUST_PROXY the socket's address, without parsing X-Forwarded-For.
 */
export function clientAddressOf(hops: number): (request: IncomingMessage) => string {
  if (hops === 0) return (request) => request.socket.remoteAddress ?? '';
  const trust = trustsProxyHops(hops);
  return (request) => proxyAddr(request, trust);
}
