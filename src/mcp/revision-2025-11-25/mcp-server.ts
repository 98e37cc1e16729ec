import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, CreateTaskResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../../domain/errors.js';
import type { ServiceDeps } from '../../services/context.js';
import { asStoreUnavailable } from '../../store/faults.js';
import { SERVICE_NAME } from '../../version.js';
import { SERVER_TITLE } from '../card.js';
import { refusal, toolSuccess } from '../results.js';
import type { McpSdk } from '../sdk.js';
import { TASK_CARD_URI, taskCard } from '../task-card.js';
import { definitionsOf, serverInstructions, type ToolRecord } from '../tools.js';
import { createdTask, refusalError, registerTaskHandlers, TASK_TOOL, TASKS_CAPABILITY } from './tasks.js';

/**
 * One MCP server per HTTP request (stateless streamable HTTP), for protocol revision 2025-11-25.
 * The tools are the records of tools.ts: their definitions for tools/list, their handlers run by
 * runTool, which both revisions share.
 */

/** The task a submit_human_task call created (none for a dry run). */
export function createdTaskId(body: object): string | undefined {
  const id = (body as { task_id?: unknown }).task_id;
  return typeof id === 'string' ? id : undefined;
}

/** What a tool call came to: the REST body, or the refusal (the contract's error). */
export type ToolOutcome = { ok: true; body: object } | { ok: false; error: AppError };

/**
 * Runs one tool for either protocol revision (2025-11-25 here, 2026-07-28 in modern.ts): the
 * same handler, caller and refusal mapping, so the two revisions cannot answer differently.
 */
export async function runTool(
  deps: ServiceDeps,
  request: FastifyRequest,
  tool: ToolRecord,
  args: Record<string, unknown>,
  signal: AbortSignal,
  asTask = false,
): Promise<ToolOutcome> {
  const name = tool.name;
  try {
    const body = await tool.handle(request, args, signal);
    request.log.info({ tool: name, task: asTask }, 'mcp tool call');
    return { ok: true, body };
  } catch (error) {
    // A store that stopped answering is a 503 refusal (service_unavailable), never internal_error.
    const refused = isAppError(error)
      ? error
      : (asStoreUnavailable(deps.store.faults, error) ?? new AppError('internal_error', `Something went wrong on our side. Request id: ${request.id}.`));
    if (!isAppError(error) || refused.status >= 500) request.log.error({ err: error, tool: name }, 'mcp tool call failed');
    else request.log.info({ tool: name, error: refused.code }, 'mcp tool call refused');
    return { ok: false, error: refused };
  }
}

/** The MCP spec's error for resources/read of an unknown URI. */
export const RESOURCE_NOT_FOUND = -32002;

/** `sdk` is the loaded MCP SDK (sdk.ts): the server is built only once a request needs it. */
export function createMcpServer(sdk: McpSdk, deps: ServiceDeps, tools: readonly ToolRecord[], request: FastifyRequest): Server {
  const { CallToolRequestSchema, ErrorCode, ListResourcesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema } = sdk.types;
  const server = new sdk.Server(
    { name: SERVICE_NAME, title: SERVER_TITLE, version: deps.version },
    { capabilities: { tools: { listChanged: false }, resources: {}, tasks: TASKS_CAPABILITY }, instructions: serverInstructions(deps) },
  );
  registerTaskHandlers(sdk.types, server, deps, request);

  const definitions = definitionsOf(tools);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: definitions }));

  // MCP Apps: the task card (task-card.ts), the one resource.
  const card = taskCard(deps.config.baseUrl);
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [card.listed] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (read) => {
    if (read.params.uri !== TASK_CARD_URI) throw new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri: read.params.uri.slice(0, 200) });
    return { contents: [card.contents] };
  });

  server.setRequestHandler(CallToolRequestSchema, async (call, extra): Promise<CallToolResult | CreateTaskResult> => {
    const name = call.params.name;
    // An unknown tool is a protocol fault, answered the way the SDK's McpServer does.
    const tool = tools.find((candidate) => candidate.name === name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${name.slice(0, 100)} not found`);
    const asTask = call.params.task !== undefined;
    if (asTask && name !== TASK_TOOL) {
      throw new McpError(
        ErrorCode.MethodNotFound,
        `Tool ${name} cannot be called as a task (its execution.taskSupport is "forbidden"): call it without "task".`,
      );
    }
    const outcome = await runTool(deps, request, tool, call.params.arguments ?? {}, extra.signal, asTask);
    if (outcome.ok) {
      // A task-augmented submission answers with the MCP task, which is the service task.
      // A dry run created nothing: its answer is the tool result, task or not.
      const taskId = createdTaskId(outcome.body);
      if (asTask && taskId !== undefined) return await createdTask(sdk.types, deps, taskId);
      return toolSuccess(tool.name, outcome.body);
    }
    // A task-augmented call has no room for a refusal result: it becomes a JSON-RPC error.
    if (asTask) throw refusalError(sdk.types, tool.name, outcome.error);
    return refusal(tool.name, outcome.error);
  });

  return server;
}
