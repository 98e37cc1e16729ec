import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { AppError } from '../domain/errors.js';
import { ErrorSchema } from '../domain/tasks/schemas.js';
import type { ServiceDeps } from '../services/context.js';
import { asStoreUnavailable } from '../store/faults.js';
import { type ServerCard, ServerCardSchema, serverCard } from './card.js';
import { hostGuard } from './host-guard.js';
import { createMcpServer } from './revision-2025-11-25/mcp-server.js';
import { modernMcp } from './revision-2026-07-28/mcp-server.js';
import { loadMcpSdk, loadMcpTypes } from './sdk.js';
import { anthropicTools, openAiTools } from './tool-exports.js';
import { buildTools, definitionsOf } from './tools.js';

/**
 * The MCP tool server: stateless streamable HTTP on POST /mcp inside the Fastify app, plus the
 * server card. GET /mcp answers 405 from its own (documented) route; DELETE /mcp has none, so the
 * app's 405 handler answers it with `method_not_allowed` and `Allow: POST` (there are no sessions
 * to stream to or to end).
 *
 * Fastify parses the body first, so an unparsable body (400 invalid_json), an oversized one (413
 * payload_too_large) or a non-JSON one (415) gets the contract's error before the SDK sees it;
 * JSON that is not JSON-RPC gets the SDK's protocol error.
 */

const MCP_ROUTE_DESCRIPTION =
  'Model Context Protocol over streamable HTTP, stateless: POST a JSON-RPC 2.0 message (or batch) with ' +
  'Accept: application/json, text/event-stream. initialize is optional; tools/list and tools/call work directly. ' +
  'Tools: get_human_services, submit_human_task, check_task_status, message_human_operator. ' +
  'MCP tasks (2025-11-25): submit_human_task may be called as a task; tasks/get and tasks/result answer from the service task (taskId = task_id). ' +
  'Protocol revision 2026-07-28 is served too (server/discover; each request carries its protocol version in _meta; tasks extension io.modelcontextprotocol/tasks). ' +
  'Host (and, for a loopback BASE_URL, Origin) must name this server: otherwise 403 forbidden (DNS-rebinding protection).';

/** JSON-RPC 2.0 §5.1 Parse error (id unknown: null) for a body the body guards refuse. */
function jsonRpcParseError(refusal: AppError): { status: number; body: unknown } {
  const { error, message, details } = refusal.toBody();
  return { status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${message}`, data: { error, details } } } };
}

/** Headers already set on the reply (CORS, request id, rate-limit policy) must survive hijack(). */
function carryHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && !reply.raw.hasHeader(name)) reply.raw.setHeader(name, value);
  }
}

async function handleMcp(deps: ServiceDeps, tools: ReturnType<typeof buildTools>, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // Without a Content-Type Fastify only lets an empty body through (anything else is 415 before
  // this point): there is no message to answer.
  if (request.headers['content-type'] === undefined) {
    throw new AppError('invalid_json', 'The request body is empty: send a JSON-RPC 2.0 message as JSON.');
  }
  // JSON-RPC 2.0 §6: an empty batch is answered with one Invalid Request (the SDK sends 202, no body).
  if (Array.isArray(request.body) && request.body.length === 0) {
    await reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: the batch is empty' } });
    return;
  }
  // The SDK is loaded by the first MCP request (sdk.ts); a failure to load is a 500 like any other.
  const sdk = await loadMcpSdk();
  const server = createMcpServer(sdk, deps, tools, request);
  const transport = new sdk.StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  carryHeaders(reply);
  reply.hijack();
  // One server and transport per request: release both when the response is done or aborted.
  reply.raw.on('close', () => {
    transport.close().catch((error: unknown) => request.log.warn({ err: error }, 'closing the MCP transport failed'));
    server.close().catch((error: unknown) => request.log.warn({ err: error }, 'closing the MCP server failed'));
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  } catch (error) {
    request.log.error({ err: error }, 'mcp request failed');
    if (!reply.raw.headersSent) {
      const error503 = asStoreUnavailable(deps.store.faults, error);
      const failure = error503 ?? new AppError('internal_error', `Something went wrong on our side. Request id: ${request.id}.`);
      reply.raw.writeHead(failure.status, { 'content-type': 'application/json; charset=utf-8', ...failure.headers }).end(JSON.stringify(failure.toBody()));
    } else {
      reply.raw.end();
    }
  }
}

export async function registerMcp(app: FastifyInstance, deps: ServiceDeps): Promise<void> {
  const tools = buildTools(deps);
  // Built on the first request for it: the protocol versions it lists come from the SDK, loaded then.
  let card: ServerCard | undefined;
  const cardOf = async (): Promise<ServerCard> => {
    card ??= serverCard(deps, definitionsOf(tools), await loadMcpTypes());
    return card;
  };
  const guard = hostGuard(deps.config.baseUrl, deps.config.allowedHosts);
  const modern = modernMcp(deps, tools);

  app.post(
    '/mcp',
    {
      // Every request counts as one read for flood control; submissions and messages also use
      // their own quotas inside the service layer, exactly as over REST.
      // check_task_status with wait_seconds and tasks/result hold the request (see holdsRequests).
      // A body the guards refuse (a NUL character, a number JSON cannot hold, nesting too deep) is
      // JSON-RPC's parse error here, with the contract's code and details as its data.
      config: { kind: 'read', holdsRequests: true, bodyRefusal: jsonRpcParseError },
      onRequest: guard,
      schema: {
        operationId: 'mcp',
        summary: 'MCP tool server (streamable HTTP, stateless)',
        description: MCP_ROUTE_DESCRIPTION,
        tags: ['mcp'],
        body: Type.Unknown({ description: 'A JSON-RPC 2.0 request, notification or batch.' }),
        response: {
          200: Type.Object({}, { additionalProperties: true, description: 'The JSON-RPC 2.0 response (or batch of responses).' }),
          202: Type.Null({ description: 'Notifications only: accepted, no body.' }),
          ...Object.fromEntries(
            [400, 406, 413, 415].map((code) => [
              code,
              Type.Object({}, { additionalProperties: true, description: 'A contract error body, or a JSON-RPC error from the protocol layer.' }),
            ]),
          ),
          403: ErrorSchema,
          429: ErrorSchema,
        },
      },
    },
    // 2026-07-28 requests (a per-request envelope) go to the SDK v2; everything else, initialize
    // included, to the 2025-11-25 server as before.
    async (request, reply) => ((await modern.isModern(request)) ? modern.serve(request, reply) : handleMcp(deps, tools, request, reply)),
  );

  // GET /mcp would open a server-sent event stream on a stateful server; this one is stateless.
  // It has a route (kept out of the 405 handler's Allow lists) so the API documents the 405.
  app.get(
    '/mcp',
    {
      config: { kind: 'read', refusesMethod: true },
      schema: {
        operationId: 'mcpStream',
        summary: 'Not available: the tool server is stateless (POST only)',
        description: 'There is no event stream to open: always 405 method_not_allowed with Allow: POST.',
        tags: ['mcp'],
        response: { 405: ErrorSchema },
      },
    },
    async (_request, reply) => {
      reply.header('Allow', 'POST');
      throw new AppError('method_not_allowed', 'GET is not supported here: the MCP server is stateless. Allowed: POST.');
    },
  );

  const cardRoute = (operationId: string, summary: string, hide = false) => ({
    config: { kind: 'read' as const },
    schema: { operationId, summary, tags: ['mcp'], response: { 200: ServerCardSchema }, ...(hide ? { hide } : {}) },
  });
  app.get('/.well-known/mcp', cardRoute('mcpServerCard', 'MCP server card: how to connect to the tool server'), cardOf);
  app.get('/mcp/server-card', cardRoute('mcpServerCardAlias', 'MCP server card (same as /.well-known/mcp)'), cardOf);
  app.get(
    '/.well-known/mcp/server-card',
    cardRoute('mcpServerCardWellKnown', 'MCP server card at the server-card extension path (same as /.well-known/mcp)'),
    cardOf,
  );
  app.get('/.well-known/mcp.json', cardRoute('mcpServerCardJson', 'MCP server card (same as /.well-known/mcp)'), cardOf);
  // The path early adopters of the proposal probe; same card, kept out of the OpenAPI listing.
  app.get('/.well-known/mcp/server-card.json', cardRoute('mcpServerCardLegacy', 'MCP server card (same as /.well-known/mcp)', true), cardOf);

  // The same tools for agents that call a model's tool-use API directly (tool-exports.ts).
  const exports = { openai: openAiTools(definitionsOf(tools), deps.config.baseUrl), anthropic: anthropicTools(definitionsOf(tools), deps.config.baseUrl) };
  const exportRoute = (operationId: string, summary: string) => ({
    config: { kind: 'read' as const },
    schema: { operationId, summary, tags: ['mcp'], response: { 200: Type.Array(Type.Object({}, { additionalProperties: true })) } },
  });
  app.get(
    '/tools/openai.json',
    exportRoute('openAiTools', 'The MCP tools as OpenAI function tools ({type: "function", function})'),
    async () => exports.openai,
  );
  app.get(
    '/tools/anthropic.json',
    exportRoute('anthropicTools', 'The MCP tools as Anthropic tool definitions ({name, description, input_schema})'),
    async () => exports.anthropic,
  );
}
