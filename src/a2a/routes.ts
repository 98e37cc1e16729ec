import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { A2AError } from '../domain/a2a/errors.js';
import type { AppError } from '../domain/errors.js';
import { addJsonParser } from '../http/bodies/json-body.js';
import { callerFrom } from '../http/client.js';
import { contractError } from '../http/errors.js';
import type { Caller, ServiceDeps } from '../services/context.js';
import { asStoreUnavailable } from '../store/faults.js';
import { internalError, jsonRpcError, restError } from './envelopes.js';
import { type MethodContext, type MethodOutcome, runMethod } from './methods.js';
import { restCall } from './rest-paths.js';
import { type StreamEnvelope, writeStream } from './streams.js';

/**
 * The A2A 1.0 door (contract "A2A 1.0", docs/a2a.md): JSON-RPC 2.0 at POST /a2a and the HTTP+JSON
 * binding under /a2a/v1, both declared in the agent card. The methods are written once
 * (methods.ts) over the service functions every door uses; this file only unwraps and wraps the
 * two bindings' envelopes.
 *
 * Every request counts as one read for flood control, as on /mcp; submissions and messages also
 * use their own quotas inside the service layer. A blocking SendMessage and the streams hold the
 * request (holdsRequests), counted in the connection caps. Requests carry `A2A-Version: 1.0`
 * (header, or the `A2A-Version` query parameter); without it A2A means 0.3, which this agent does
 * not speak: VersionNotSupportedError.
 */

/** The A2A protocol versions this door speaks (Major.Minor). */
export const A2A_VERSIONS = ['1.0'] as const;

const A2A_ROUTE_DESCRIPTION =
  'A2A 1.0 (Agent2Agent protocol), JSON-RPC 2.0 binding: POST one request {jsonrpc, id, method, params} with the header A2A-Version: 1.0. ' +
  'Methods: SendMessage (a new message submits a task: its text parts are the description, one data part carries task request fields; messageId is the idempotency key), ' +
  'SendStreamingMessage and SubscribeToTask (text/event-stream), GetTask, ListTasks (by contextId, or a verified agent’s own tasks), CancelTask, the push notification config methods. ' +
  'The HTTP+JSON binding of the same methods is served under /a2a/v1 (A2A 1.0 §11). Agent card: /.well-known/agent-card.json.';

/** Which A2A version a request asks for; undefined when it names none (A2A then means 0.3). */
function requestedVersion(request: FastifyRequest): string | undefined {
  const header = request.headers['a2a-version'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value.trim() !== '') return value.trim();
  const query = (request.query ?? {}) as Record<string, unknown>;
  const param = query['A2A-Version'];
  return typeof param === 'string' && param !== '' ? param : undefined;
}

function checkVersion(request: FastifyRequest): void {
  const version = requestedVersion(request) ?? '0.3';
  const majorMinor = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(version);
  if (majorMinor && A2A_VERSIONS.includes(`${majorMinor[1]}.${majorMinor[2]}` as (typeof A2A_VERSIONS)[number])) return;
  throw new A2AError(
    'VersionNotSupported',
    `A2A version ${version.slice(0, 20)} is not supported: send A2A-Version: ${A2A_VERSIONS.join(', ')}${requestedVersion(request) === undefined ? ' (without it A2A means 0.3)' : ''}.`,
  );
}

/** JSON-RPC 2.0 §5.1 Parse error for a body the body guards refuse, with the contract's code and details as its data. */
function jsonRpcParseError(refusal: AppError): { status: number; body: unknown } {
  const { error, message, details } = refusal.toBody();
  return { status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${message}`, data: { error, details } } } };
}

function contextOf(deps: ServiceDeps, request: FastifyRequest, reply: FastifyReply): MethodContext {
  let caller: Caller | undefined;
  return { deps, caller: () => (caller ??= callerFrom(request, deps)), closes: reply.raw };
}

/** A fault as the error the contract names: 503 for a store outage, 500 otherwise (logged). */
function faultOf(deps: ServiceDeps, request: FastifyRequest, error: unknown): AppError {
  const unavailable = asStoreUnavailable(deps.store.faults, error);
  if (unavailable) return unavailable;
  request.log.error({ err: error }, 'a2a request failed');
  return internalError(request.id);
}

/** A body in a media type the bindings do not speak: kept as this marker, refused by the handler in the binding's own error. */
class UnsupportedBody {
  constructor(readonly contentType: string) {}
}

function refuseUnsupported(body: unknown): void {
  if (body instanceof UnsupportedBody) {
    throw new A2AError(
      'ContentTypeNotSupported',
      `Send the request as JSON (Content-Type: application/json or application/a2a+json), not ${body.contentType.slice(0, 80)}.`,
      415,
    );
  }
}

type JsonRpcId = string | number | null;

function isJsonRpcId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || value === null;
}

async function handleJsonRpc(deps: ServiceDeps, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const body = request.body as Record<string, unknown> | undefined;
  const id: JsonRpcId = typeof body === 'object' && body !== null && !Array.isArray(body) && isJsonRpcId(body.id) ? body.id : null;
  const answer = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    reply
      .code(200)
      .headers(headers)
      .type('application/json')
      .send({ jsonrpc: '2.0', id, ...payload });
  const fail = (error: unknown) => {
    const refusal = jsonRpcError(error) ?? jsonRpcError(faultOf(deps, request, error));
    return answer({ error: refusal?.error }, refusal?.headers);
  };
  let outcome: MethodOutcome;
  try {
    refuseUnsupported(body);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new A2AError('InvalidRequest', 'Invalid Request: send one JSON-RPC 2.0 request object (A2A uses no batches).');
    }
    if (body.jsonrpc !== '2.0' || typeof body.method !== 'string' || !isJsonRpcId(body.id) || body.id === null) {
      throw new A2AError('InvalidRequest', 'Invalid Request: a JSON-RPC 2.0 request needs jsonrpc "2.0", a method name and an id (a string or a number).');
    }
    checkVersion(request);
    outcome = await runMethod(contextOf(deps, request, reply), body.method, body.params);
  } catch (error) {
    return fail(error);
  }
  if ('result' in outcome) return answer({ result: outcome.result });
  const envelope: StreamEnvelope = {
    event: (event) => ({ jsonrpc: '2.0', id, result: event }),
    error: (error) => ({ data: { jsonrpc: '2.0', id, error: (jsonRpcError(error) ?? jsonRpcError(faultOf(deps, request, error)))?.error } }),
  };
  await writeStream(reply, outcome.stream, envelope);
}

async function handleRest(deps: ServiceDeps, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const fail = (error: unknown) => {
    const refusal = restError(error) ?? restError(faultOf(deps, request, error));
    return reply
      .code(refusal?.status ?? 500)
      .headers(refusal?.headers ?? {})
      .type('application/json')
      .send(refusal?.body);
  };
  let outcome: MethodOutcome;
  let status = 200;
  try {
    refuseUnsupported(request.body);
    const call = restCall(request);
    checkVersion(request);
    outcome = await runMethod(contextOf(deps, request, reply), call.method, call.params);
    if (call.method === 'DeleteTaskPushNotificationConfig') status = 204;
  } catch (error) {
    return fail(error);
  }
  if ('result' in outcome) {
    if (status === 204) return reply.code(204).send();
    return reply.code(200).type('application/json').send(outcome.result);
  }
  const envelope: StreamEnvelope = {
    event: (event) => event,
    error: (error) => ({ event: 'error', data: { error: restError(error)?.body ?? restError(faultOf(deps, request, error))?.body } }),
  };
  await writeStream(reply, outcome.stream, envelope);
}

export async function registerA2a(app: FastifyInstance, deps: ServiceDeps): Promise<void> {
  await app.register(async (scope) => {
    // The HTTP+JSON binding's media type (A2A 1.0 §11.1), parsed as JSON is; an empty body is none.
    scope.removeContentTypeParser('application/json');
    addJsonParser(scope, 'application/json', { emptyIsNone: true });
    addJsonParser(scope, 'application/a2a+json', { emptyIsNone: true });
    // Any other media type reaches the handler as a marker: refused with ContentTypeNotSupportedError
    // in the binding's envelope (-32005; 415 over HTTP+JSON), not the API's 415 body.
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (request, _body, done) => {
      done(null, new UnsupportedBody(String(request.headers['content-type'] ?? '')));
    });

    scope.post(
      '/a2a',
      {
        config: { kind: 'read', holdsRequests: true, bodyRefusal: jsonRpcParseError },
        // What is refused before the handler (the read limit, a signature that does not verify, a
        // body too large or not JSON, a draining instance) is answered as JSON-RPC too, with the
        // contract's HTTP status and headers (Retry-After, RateLimit-*).
        errorHandler: (error, request, reply) => {
          const refusal = contractError(error, request, deps.store.faults);
          const rpc = jsonRpcError(refusal);
          // The refusal's own status (400, 413, 415, 429, 503): the typed reply knows only the declared ones.
          return reply
            .code(refusal.status as 400)
            .headers(refusal.headers)
            .type('application/json')
            .send({ jsonrpc: '2.0', id: null, error: rpc?.error });
        },
        schema: {
          operationId: 'a2a',
          summary: 'A2A 1.0 agent (JSON-RPC 2.0 binding)',
          description: A2A_ROUTE_DESCRIPTION,
          tags: ['a2a'],
          body: Type.Unknown({ description: 'One JSON-RPC 2.0 request.' }),
          response: {
            200: Type.Object(
              {},
              { additionalProperties: true, description: 'The JSON-RPC 2.0 response, or a text/event-stream of them for the streaming methods.' },
            ),
            400: Type.Object({}, { additionalProperties: true, description: 'A contract error body, or a JSON-RPC parse error.' }),
            413: Type.Object({}, { additionalProperties: true, description: "A JSON-RPC 2.0 error response; its data carries the contract's error body." }),
            429: Type.Object({}, { additionalProperties: true, description: "A JSON-RPC 2.0 error response; its data carries the contract's error body." }),
          },
        },
      },
      async (request, reply) => handleJsonRpc(deps, request, reply),
    );

    // The HTTP+JSON binding: one route, dispatched by path (A2A's `/tasks/{id}:cancel` form is not
    // a router pattern). Described by the A2A specification and the agent card, not by OpenAPI.
    scope.route({
      method: ['GET', 'POST', 'DELETE'],
      url: '/a2a/v1/*',
      config: { kind: 'read', holdsRequests: true },
      handler: async (request, reply) => handleRest(deps, request, reply),
    });
  });
}
