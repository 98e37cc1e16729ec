import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, CreateTaskResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import { AppError, isAppError, validationFailed } from '../../domain/errors.js';
import { isIdempotencyKey } from '../../domain/ids.js';
import { callerFrom } from '../../http/client.js';
import { listMyTasks } from '../../services/agents/my-tasks.js';
import type { ServiceDeps } from '../../services/context.js';
import { readThread, sendMessage } from '../../services/messages/messages.js';
import { answerQuestion } from '../../services/questions/questions.js';
import { submitTask } from '../../services/tasks/tasks.js';
import { awaitTaskUpdate, MAX_TOOL_WAIT_SECONDS } from '../../services/waiting/task-watch.js';
import { asStoreUnavailable } from '../../store/faults.js';
import { SERVICE_NAME } from '../../version.js';
import { SERVER_TITLE } from '../card.js';
import { humanServices } from '../catalog-info.js';
import { refusal, toolSuccess } from '../results.js';
import type { McpSdk } from '../sdk.js';
import { serverInstructions, TOOL_NAMES, type ToolName } from '../tools.js';
import { createdTask, refusalError, registerTaskHandlers, TASK_TOOL, TASKS_CAPABILITY } from './tasks.js';

/**
 * One MCP server per HTTP request (stateless streamable HTTP). Each tool is a thin adapter over
 * the same service function as its REST route, called with the HTTP caller's identity, so
 * validation, limits, duplicates, blocklist and idempotency are shared with REST.
 */

type Args = Record<string, unknown>;
type Handler = (args: Args, signal: AbortSignal) => Promise<object>;

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

    check_task_status: async (args, signal) => {
      const taskId = args.task_id;
      const details: string[] = [];
      if (taskId === undefined || taskId === null || taskId === '') details.push('task_id is required');
      else if (typeof taskId !== 'string') details.push('task_id must be a string');
      else if (taskId.length > 200) details.push('task_id must be at most 200 characters');
      const wait = args.wait_seconds ?? 0;
      if (typeof wait !== 'number' || !Number.isInteger(wait) || wait < 0 || wait > MAX_TOOL_WAIT_SECONDS) {
        details.push(`wait_seconds must be a whole number from 0 to ${MAX_TOOL_WAIT_SECONDS}`);
      }
      const known = args.known_updated_at ?? undefined;
      if (known !== undefined && (typeof known !== 'string' || known.length > 64))
        details.push('known_updated_at must be the updated_at string of the task you hold');
      if (details.length > 0) throw validationFailed(details);
      return awaitTaskUpdate(deps, taskId as string, { waitSeconds: wait as number, knownUpdatedAt: known as string | undefined, signal });
    },

    message_human_operator: async (args) => {
      const caller = { ...callerFrom(request, deps), idempotencyKey: undefined };
      return (await sendMessage(deps, caller, args)).body;
    },

    answer_operator_question: async (args) => {
      const details: string[] = [];
      for (const field of ['task_id', 'question_id'] as const) {
        const value = args[field];
        if (value === undefined || value === null || value === '') details.push(`${field} is required`);
        else if (typeof value !== 'string' || value.length > 200) details.push(`${field} must be a string of at most 200 characters`);
      }
      if (details.length > 0) throw validationFailed(details);
      return answerQuestion(deps, { taskId: args.task_id as string, questionId: args.question_id as string, answer: args.answer });
    },

    check_message_thread: async (args) => {
      const { message_id: id, thread_token: token } = args;
      // Whatever is wrong with the pair, the answer is the same not_found as over REST.
      return readThread(deps, typeof id === 'string' ? id : '', typeof token === 'string' ? `Bearer ${token}` : undefined);
    },

    list_my_tasks: async (args) => listMyTasks(deps, callerFrom(request, deps), args),
  };
}

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
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
  name: ToolName,
  args: Args,
  signal: AbortSignal,
  asTask = false,
): Promise<ToolOutcome> {
  try {
    const body = await handlers(deps, request)[name](args, signal);
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

/** `sdk` is the loaded MCP SDK (sdk.ts): the server is built only once a request needs it. */
export function createMcpServer(sdk: McpSdk, deps: ServiceDeps, tools: Tool[], request: FastifyRequest): Server {
  const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } = sdk.types;
  const server = new sdk.Server(
    { name: SERVICE_NAME, title: SERVER_TITLE, version: deps.version },
    { capabilities: { tools: { listChanged: false }, tasks: TASKS_CAPABILITY }, instructions: serverInstructions(deps) },
  );
  registerTaskHandlers(sdk.types, server, deps);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

  server.setRequestHandler(CallToolRequestSchema, async (call, extra): Promise<CallToolResult | CreateTaskResult> => {
    const name = call.params.name;
    // An unknown tool is a protocol fault, answered the way the SDK's McpServer does.
    if (!isToolName(name)) throw new McpError(ErrorCode.InvalidParams, `Tool ${name.slice(0, 100)} not found`);
    const asTask = call.params.task !== undefined;
    if (asTask && name !== TASK_TOOL) {
      throw new McpError(
        ErrorCode.MethodNotFound,
        `Tool ${name} cannot be called as a task (its execution.taskSupport is "forbidden"): call it without "task".`,
      );
    }
    const outcome = await runTool(deps, request, name, call.params.arguments ?? {}, extra.signal, asTask);
    if (outcome.ok) {
      // A task-augmented submission answers with the MCP task, which is the service task.
      if (asTask) return await createdTask(sdk.types, deps, (outcome.body as { task_id: string }).task_id);
      return toolSuccess(name, outcome.body);
    }
    // A task-augmented call has no room for a refusal result: it becomes a JSON-RPC error.
    if (asTask) throw refusalError(sdk.types, name, outcome.error);
    return refusal(name, outcome.error);
  });

  return server;
}
