import type { CallToolResult as V1CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Server as ModernServer, ServerContext, StandardSchemaV1 } from '@modelcontextprotocol/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { loadOnce } from '../../domain/load-once.js';
import type { ServiceDeps } from '../../services/context.js';
import { SERVICE_NAME } from '../../version.js';
import { SERVER_TITLE } from '../card.js';
import { refusal, toolSuccess } from '../results.js';
import { createdTaskId, RESOURCE_NOT_FOUND, runTool } from '../revision-2025-11-25/mcp-server.js';
import { TASK_TOOL } from '../revision-2025-11-25/tasks.js';
import { TASK_CARD_URI, taskCard } from '../task-card.js';
import { definitionsOf, serverInstructions, type ToolRecord } from '../tools.js';
import {
  cancelTaskExt,
  createdTaskOf,
  declaresTasks,
  getTaskExt,
  RPC,
  RpcError,
  TASKS_EXTENSION_ID,
  type TaskRequestContext,
  taskFor,
  updateTaskExt,
} from './tasks.js';

/**
 * Protocol revision 2026-07-28 on /mcp, beside 2025-11-25 (mcp-server.ts): stateless requests that
 * carry the protocol version, client info and capabilities in each request's `_meta`, and
 * `server/discover` instead of `initialize`. Served by the official SDK v2
 * (@modelcontextprotocol/server, `createMcpHandler` in modern-only mode: legacy requests never
 * reach it, routes.ts sends them to the v1 SDK as before). The tools are the same definitions
 * and handlers (the records of tools.ts, run by runTool), so both revisions answer alike.
 */

const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** The SDK v2 is loaded by the first MCP request that needs it, like v1 (sdk.ts). */
const loadModernSdk = loadOnce(() => import('@modelcontextprotocol/server'));

/** Params passed through unchanged: each handler checks its own (the SDK needs a Standard Schema). */
const ANY_PARAMS: StandardSchemaV1<Record<string, unknown>> = {
  '~standard': { version: 1, vendor: 'human-task-service', validate: (value: unknown) => ({ value: (value ?? {}) as Record<string, unknown> }) },
};

/** The Fastify request behind each web Request handed to the SDK: the caller's identity lives there. */
const origins = new WeakMap<Request, FastifyRequest>();

function clientCapabilitiesOf(ctx: ServerContext): unknown {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_KEY];
}

function createModernServer(
  sdk: typeof import('@modelcontextprotocol/server'),
  deps: ServiceDeps,
  tools: readonly ToolRecord[],
  request: FastifyRequest,
): ModernServer {
  const server = new sdk.Server(
    { name: SERVICE_NAME, title: SERVER_TITLE, version: deps.version },
    {
      capabilities: { tools: { listChanged: false }, resources: {}, extensions: { [TASKS_EXTENSION_ID]: {} } },
      instructions: serverInstructions(deps),
    },
  );
  // The definitions are plain JSON Schema objects, the same for both revisions.
  const listed = JSON.parse(JSON.stringify(definitionsOf(tools))) as import('@modelcontextprotocol/server').Tool[];
  server.setRequestHandler('tools/list', async () => ({ tools: listed }));

  // MCP Apps: the task card (task-card.ts), the one resource, as on 2025-11-25.
  const card = taskCard(deps.config.baseUrl);
  server.setRequestHandler('resources/list', async () => ({ resources: [card.listed] }));
  // Params checked here: the SDK's own check of a missing uri answers -32603 with its schema library's text.
  server.setRequestHandler('resources/read', { params: ANY_PARAMS }, async (params) => {
    if (typeof params.uri !== 'string') throw new RpcError(RPC.invalidParams, 'uri is required: the resource URI to read, e.g. ' + TASK_CARD_URI);
    // The SDK answers the spec's -32002 as -32602 on this revision (both say "Resource not found").
    if (params.uri !== TASK_CARD_URI) throw new RpcError(RESOURCE_NOT_FOUND, 'Resource not found');
    return { contents: [card.contents] };
  });

  server.setRequestHandler('tools/call', async (call, ctx) => {
    const name = call.params.name;
    const tool = tools.find((candidate) => candidate.name === name);
    if (!tool) throw new RpcError(RPC.invalidParams, `Tool ${name.slice(0, 100)} not found`);
    // The client asks for a task by declaring the extension; only submit_human_task becomes one.
    const asTask = name === TASK_TOOL && declaresTasks(clientCapabilitiesOf(ctx));
    const outcome = await runTool(deps, request, tool, (call.params.arguments ?? {}) as Record<string, unknown>, ctx.mcpReq.signal, asTask);
    let result: V1CallToolResult | ReturnType<typeof createdTaskOf>;
    if (!outcome.ok) result = refusal(tool.name, outcome.error);
    else if (asTask && createdTaskId(outcome.body) !== undefined) result = createdTaskOf(await taskFor(deps, createdTaskId(outcome.body) as string));
    else result = toolSuccess(tool.name, outcome.body);
    // The SDK's own result type has no room for the extension's task answer; the wire shapes are the ext-tasks ones.
    return result as unknown as import('@modelcontextprotocol/server').CallToolResult;
  });

  const taskContext = (ctx: ServerContext): TaskRequestContext => ({
    deps,
    request,
    clientCapabilities: clientCapabilitiesOf(ctx),
    inputResponses: ctx.mcpReq.inputResponses,
    signal: ctx.mcpReq.signal,
  });
  server.setRequestHandler('tasks/get', { params: ANY_PARAMS }, async (params, ctx) => ({ ...(await getTaskExt(taskContext(ctx), params)) }));
  server.setRequestHandler('tasks/update', { params: ANY_PARAMS }, async (params, ctx) => updateTaskExt(taskContext(ctx), params));
  server.setRequestHandler('tasks/cancel', { params: ANY_PARAMS }, async (params, ctx) => cancelTaskExt(taskContext(ctx), params));
  return server;
}

/** The request as the web-standard Request the SDK v2 reads (Fastify has parsed the body already). */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const url = new URL(request.url, 'http://mcp.invalid');
  return new Request(url, { method: 'POST', headers, body: JSON.stringify(request.body ?? null) });
}

function isMessage(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && ('jsonrpc' in value || 'method' in value);
}

function looksLikeJsonRpc(body: unknown): boolean {
  return Array.isArray(body) ? body.length > 0 && body.every(isMessage) : isMessage(body);
}

const ENVELOPE_KEYS = ['io.modelcontextprotocol/protocolVersion', 'io.modelcontextprotocol/clientInfo', 'io.modelcontextprotocol/clientCapabilities'];

/** A 2026-07-28 claim: an envelope key in some message's `_meta`, or a protocol-version header past 2025. */
function claimsModern(request: FastifyRequest): boolean {
  const header = request.headers['mcp-protocol-version'];
  if (typeof header === 'string' && header.trim() > '2026') return true;
  const messages: unknown[] = Array.isArray(request.body) ? request.body : [request.body];
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: unknown } }).params?._meta;
    return typeof meta === 'object' && meta !== null && ENVELOPE_KEYS.some((key) => Object.hasOwn(meta, key));
  });
}

export interface ModernMcp {
  /** Whether the request is 2026-07-28 traffic (a per-request envelope), by the SDK's own classification. */
  isModern(request: FastifyRequest): Promise<boolean>;
  serve(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

export function modernMcp(deps: ServiceDeps, tools: readonly ToolRecord[]): ModernMcp {
  const handler = loadOnce(async () => {
    const sdk = await loadModernSdk();
    return sdk.createMcpHandler(
      (context) => {
        const request = context.requestInfo ? origins.get(context.requestInfo) : undefined;
        if (!request) throw new Error('MCP request without its HTTP request');
        return createModernServer(sdk, deps, tools, request);
      },
      {
        legacy: 'reject',
        responseMode: 'json',
        onerror: (error) => deps.log.info({ err: error }, 'mcp 2026-07-28 request refused or failed'),
      },
    );
  });

  return {
    async isModern(request) {
      // No body, or JSON that is no JSON-RPC message at all: the 2025-11-25 path answers as it always has.
      if (request.headers['content-type'] === undefined || !looksLikeJsonRpc(request.body)) return false;
      // Without a claim the SDK would say legacy too: 2025-era traffic never loads the SDK v2.
      if (!claimsModern(request)) return false;
      const sdk = await loadModernSdk();
      return !(await sdk.isLegacyRequest(webRequestOf(request), request.body));
    },
    async serve(request, reply) {
      // 2026-07-28 has no sessions: a session id means a client mixing the revisions.
      if (request.headers['mcp-session-id'] !== undefined) {
        const id = (request.body as { id?: unknown }).id;
        await reply
          .code(400)
          .header('content-type', 'application/json')
          .send(
            JSON.stringify({
              jsonrpc: '2.0',
              id: typeof id === 'string' || typeof id === 'number' ? id : null,
              error: {
                code: RPC.invalidRequest,
                message: 'Bad Request: protocol revision 2026-07-28 has no sessions; send no Mcp-Session-Id (or use initialize for 2025-11-25).',
              },
            }),
          );
        return;
      }
      const web = webRequestOf(request);
      origins.set(web, request);
      const response = await (await handler()).fetch(web, { parsedBody: request.body });
      reply.code(response.status);
      response.headers.forEach((value, name) => {
        if (name !== 'content-length') reply.header(name, value);
      });
      const text = await response.text();
      await reply.send(text.length > 0 ? text : null);
    },
  };
}
