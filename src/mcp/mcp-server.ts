import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import { AppError, isAppError, validationFailed } from '../domain/errors.js';
import { isIdempotencyKey } from '../domain/ids.js';
import { callerFrom } from '../http/client.js';
import type { ServiceDeps } from '../services/context.js';
import { sendMessage } from '../services/messages.js';
import { getTask, submitTask } from '../services/tasks.js';
import { SERVICE_NAME } from '../version.js';
import { SERVER_TITLE } from './card.js';
import { humanServices } from './catalog-info.js';
import { refusal, success } from './results.js';
import { serverInstructions, type ToolName } from './tools.js';

/**
 * One MCP server per HTTP request (stateless streamable HTTP). Each tool is a thin adapter over
 * the same service function as its REST route, called with the HTTP caller's identity, so
 * validation, limits, duplicates, blocklist and idempotency are shared with REST.
 */

type Args = Record<string, unknown>;
type Handler = (args: Args) => Promise<object>;

const IDEMPOTENCY_KEY_RULE = 'idempotency_key must be 1 to 255 visible ASCII characters (no spaces)';

/** The idempotency_key argument plays the Idempotency-Key header's part. */
function idempotencyKeyOf(deps: ServiceDeps, args: Args, task: Args): string | undefined {
  const key = args.idempotency_key;
  if (key === undefined || key === null) return undefined;
  if (isIdempotencyKey(key)) return key;
  // Report every field error at once, as REST does: the task's own errors plus this one.
  try {
    deps.validators.task(task, deps.clock.now());
  } catch (error) {
    if (isAppError(error) && error.code === 'validation_failed') {
      throw validationFailed([...((error.extras.details as string[] | undefined) ?? []), IDEMPOTENCY_KEY_RULE]);
    }
    throw error;
  }
  throw validationFailed([IDEMPOTENCY_KEY_RULE]);
}

function handlers(deps: ServiceDeps, request: FastifyRequest): Record<ToolName, Handler> {
  return {
    get_human_services: async () => humanServices(deps),

    submit_human_task: async (args) => {
      const { idempotency_key: _key, ...task } = args;
      const idempotencyKey = idempotencyKeyOf(deps, args, task);
      // The key comes from the argument only: one HTTP request to /mcp may carry several calls.
      const caller = { ...callerFrom(request, deps), idempotencyKey };
      return (await submitTask(deps, caller, task)).body;
    },

    check_task_status: async (args) => {
      const taskId = args.task_id;
      if (taskId === undefined || taskId === null || taskId === '') throw validationFailed(['task_id is required']);
      if (typeof taskId !== 'string') throw validationFailed(['task_id must be a string']);
      if (taskId.length > 200) throw validationFailed(['task_id must be at most 200 characters']);
      return getTask(deps, taskId);
    },

    message_human_operator: async (args) => {
      const caller = { ...callerFrom(request, deps), idempotencyKey: undefined };
      return (await sendMessage(deps, caller, args)).body;
    },
  };
}

export function createMcpServer(deps: ServiceDeps, tools: Tool[], request: FastifyRequest): Server {
  const server = new Server(
    { name: SERVICE_NAME, title: SERVER_TITLE, version: deps.version },
    { capabilities: { tools: { listChanged: false } }, instructions: serverInstructions(deps) },
  );
  const byName = handlers(deps, request);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

  server.setRequestHandler(CallToolRequestSchema, async (call): Promise<CallToolResult> => {
    const name = call.params.name;
    const handler = Object.hasOwn(byName, name) ? byName[name as ToolName] : undefined;
    // An unknown tool is a protocol fault, answered the way the SDK's McpServer does.
    if (!handler) throw new McpError(ErrorCode.InvalidParams, `Tool ${name.slice(0, 100)} not found`);
    try {
      const result = success(await handler(call.params.arguments ?? {}));
      request.log.info({ tool: name }, 'mcp tool call');
      return result;
    } catch (error) {
      if (isAppError(error)) {
        if (error.status >= 500) request.log.error({ err: error, tool: name }, 'mcp tool call failed');
        else request.log.info({ tool: name, error: error.code }, 'mcp tool call refused');
        return refusal(name, error);
      }
      request.log.error({ err: error, tool: name }, 'mcp tool call failed');
      return refusal(name, new AppError('internal_error', `Something went wrong on our side. Request id: ${request.id}.`));
    }
  });

  return server;
}
