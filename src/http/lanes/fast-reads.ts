import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { isSigned } from '../../abuse/agent-signatures.js';
import type { VerifiedAgent } from '../../domain/caller.js';
import type { ServiceDeps } from '../../services/context.js';
import { cachedTask } from '../../services/tasks/tasks.js';
import { verificationOf } from '../abuse-hooks.js';
import { clientAddressOf } from '../client.js';
import { madeRepresentation, noneMatch } from '../conditional.js';
import { requestIdFor } from '../guards.js';
import type { CountResponse } from '../metrics.js';
import type { ResponseStep } from '../pipeline.js';
import { STATUS_ROUTE } from '../routes/public.js';
import { holdSubmissions } from './submission-lane.js';

/**
 * The status read's fast lane. Agents poll `GET /api/v1/tasks/{id}` far more than anything else,
 * and most polls ask again for a task that has not changed. Such a read is answered with the very
 * headers and bytes the framework answered it with last time, before the framework runs: the
 * framework's per-request work (request and reply objects, routing, validation, hooks, the
 * request logger) was most of a read's cost (docs/performance.md).
 *
 * How it stays exact:
 * - Recording: when the framework answers a plain status read (GET, no query, no Prefer) with
 *   200 or 304, the last response step records its headers and body, for the task object the
 *   read cache holds, and only if that object's representation has the ETag just sent (the ETag
 *   is a hash of the bytes, so the recording is of that very object).
 * - Answering: only while the read cache still returns that same object (services/tasks/tasks.ts
 *   cachedTask: any change to the task, here or on another instance, replaces it; while the
 *   PostgreSQL LISTEN connection is down the cache returns nothing), only for the same URL, and
 *   only for a request the framework would have answered the same way: GET, no Prefer (a hold),
 *   not draining, the connection not over a cap, the client within its read limit. Anything else
 *   goes to the framework, which answers as always (a read refused for its limit is then counted
 *   twice, which changes nothing: it is over the limit either way).
 * - What differs per request is made anew: the request id (guards.ts requestIdFor), the read
 *   limit's policy (the client's tier), remaining count and reset (the same limiter, counting the
 *   read), Date.
 * - A signed read (Web Bot Auth, docs/verified-agents.md) is verified first, by the same verifier
 *   as the framework's hook and only once (abuse-hooks.ts verificationOf), and then counted by the
 *   agent's key: a signed read costs an unsigned one plus the verification. One that does not
 *   verify goes to the framework, which refuses it with the verification's reason.
 * - The request is counted in the same metrics series and, at log level info or below, logged
 *   with the framework's two lines ("incoming request", "request completed") and their fields.
 * `test/fast-reads.test.ts` compares the lane's answers and log lines with the framework's.
 */

const PREFIX = STATUS_ROUTE.slice(0, STATUS_ROUTE.indexOf(':'));
/** Headers made anew for every request, or by Node itself: never recorded. */
const PER_REQUEST = new Set([
  'x-request-id',
  'ratelimit-policy',
  'ratelimit-remaining',
  'ratelimit-reset',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);
/** URLs recorded; the oldest is dropped beyond this (as many as the read cache keeps). */
const MAX_RECORDED = 1000;

interface Recorded {
  /** Names and values, one after the other (Node's writeHead takes them so, without copying an object). */
  headers: string[];
  body: string | undefined;
}

interface Entry {
  /** The read cache's object the recordings were made from. */
  task: object;
  etag: string;
  ok?: Recorded;
  notModified?: Recorded;
}

export interface FastReadsOptions {
  /** Counts an answered request in the request metrics (metrics.ts). */
  countResponse: CountResponse;
  /** Whether a connection is over a cap (connections.ts): the framework refuses it. */
  isOverCap: (socket: Socket) => boolean;
  /** Whether the server is closing (guards.ts): the framework answers 503. */
  draining: () => boolean;
}

/**
 * Puts the lane in front of the framework on the app's server, and returns the last response
 * step of the pipeline (pipeline.ts), which records the plain status reads the framework answered.
 */
export function installFastReads(app: FastifyInstance, deps: ServiceDeps, options: FastReadsOptions): ResponseStep {
  const { countResponse, isOverCap, draining } = options;
  const entries = new Map<string, Entry>();
  const { reads, clientHash, agentHash } = deps.abuse;
  const addressPolicy = deps.abuse.policies.read.policy;
  const verifiedPolicy = deps.abuse.verified.read.policy;
  const addressOf = clientAddressOf(deps.config.trustProxy);
  const logRequests = deps.log.isLevelEnabled('info');
  const hostOf = requestHostOf(deps.config.trustProxy);

  const record: ResponseStep = (request, reply) => {
    const status = reply.statusCode;
    if ((status !== 200 && status !== 304) || request.method !== 'GET' || request.headers.prefer !== undefined) return;
    const url = request.url;
    if (!url.startsWith(PREFIX) || request.routeOptions.url !== STATUS_ROUTE) return;
    const id = url.slice(PREFIX.length);
    if ((request.params as { task_id?: string }).task_id !== id) return;
    const task = cachedTask(deps, id);
    const etag = reply.getHeader('etag');
    const made = task === undefined ? undefined : madeRepresentation(task);
    if (task === undefined || made === undefined || made.etag !== etag) return;
    const headers: string[] = [];
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value === undefined || PER_REQUEST.has(name)) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.push(name, String(one));
    }
    if (status === 200) headers.push('content-length', String(Buffer.byteLength(made.body)));
    let entry = entries.get(url);
    if (entry === undefined || entry.task !== task) {
      entry = { task, etag: made.etag };
      entries.delete(url);
      if (entries.size >= MAX_RECORDED) entries.delete(entries.keys().next().value as string);
      entries.set(url, entry);
    }
    if (status === 200) entry.ok = { headers, body: made.body };
    else entry.notModified = { headers, body: undefined };
  };

  /** The recording this request may be answered with, if any (see above). */
  const recordingFor = (request: IncomingMessage): { url: string; recorded: Recorded } | undefined => {
    if (request.method !== 'GET' || draining()) return undefined;
    const url = request.url ?? '';
    const entry = entries.get(url);
    if (entry === undefined) return undefined;
    const asked = request.headers;
    if (asked.prefer !== undefined || isOverCap(request.socket)) return undefined;
    if (cachedTask(deps, url.slice(PREFIX.length)) !== entry.task) {
      entries.delete(url);
      return undefined;
    }
    const recorded = noneMatch(asked['if-none-match'], entry.etag) ? entry.notModified : entry.ok;
    return recorded === undefined ? undefined : { url, recorded };
  };

  /** Answers from the recording, counting the read against the client: its address, or the verified agent's key. */
  const answer = (request: IncomingMessage, response: ServerResponse, agent?: VerifiedAgent): boolean => {
    const found = recordingFor(request);
    if (found === undefined) return false;
    const { url, recorded } = found;
    const started = performance.now();
    const address = addressOf(request);
    const verdict = reads.take(agent === undefined ? clientHash(address) : agentHash(agent.keyId));
    if (verdict.remaining < 0) return false;
    const status = recorded.body === undefined ? 304 : 200;
    const requestId = requestIdFor(request);
    if (logRequests) {
      const req = { method: 'GET', url, host: hostOf(request), remoteAddress: address, remotePort: request.socket.remotePort };
      deps.log.info({ reqId: requestId, req }, 'incoming request');
    }
    const headers = recorded.headers.slice();
    const policy = agent === undefined ? addressPolicy : verifiedPolicy;
    headers.push(
      'x-request-id',
      requestId,
      'ratelimit-policy',
      policy,
      'ratelimit-remaining',
      String(verdict.remaining),
      'ratelimit-reset',
      String(verdict.resetSeconds),
    );
    response.writeHead(status, headers);
    response.end(recorded.body);
    const elapsed = performance.now() - started;
    countResponse('GET', STATUS_ROUTE, status, elapsed / 1000);
    if (logRequests) deps.log.info({ reqId: requestId, res: { statusCode: status }, responseTime: elapsed }, 'request completed');
    return true;
  };

  // Fastify's handler is the server's one 'request' listener: the lane goes in front of it.
  const [framework] = app.server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
  if (framework) {
    app.server.removeListener('request', framework);
    // Submissions are held behind everything else while other requests arrive (submission-lane.ts).
    app.server.on(
      'request',
      holdSubmissions((request, response) => {
        if (!isSigned(request.headers)) {
          if (!answer(request, response)) framework(request, response);
          return;
        }
        // A signed read the lane could answer: verified here (the framework reuses the outcome,
        // abuse-hooks.ts verificationOf), then answered as any other, counted by the agent's key.
        // A signature that does not verify, or a read the lane can no longer answer, goes on to the framework.
        if (recordingFor(request) === undefined) return framework(request, response);
        verificationOf(deps, request).then(
          (agent) => {
            if (!answer(request, response, agent)) framework(request, response);
          },
          () => framework(request, response),
        );
      }),
    );
  }
  return record;
}

/**
 * The host Fastify's request log line names (its `request.host`): behind a trusted proxy the last
 * X-Forwarded-Host, otherwise the Host header.
 */
function requestHostOf(hops: number): (request: IncomingMessage) => string {
  return (request) => {
    const forwarded = hops > 0 ? request.headers['x-forwarded-host'] : undefined;
    if (typeof forwarded === 'string') return forwarded.slice(forwarded.lastIndexOf(',') + 1).trim();
    return request.headers.host ?? '';
  };
}
