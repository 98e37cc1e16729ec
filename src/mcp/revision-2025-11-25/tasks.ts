import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, CreateTaskResult, McpError, Task as McpTask, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import { type AppError, isAppError } from '../../domain/errors.js';
import { openQuestion } from '../../domain/questions/questions.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { isFinal } from '../../domain/tasks/task.js';
import { isWithdrawal } from '../../domain/tasks/withdrawal.js';
import { callerFrom } from '../../http/client.js';
import type { ServiceDeps } from '../../services/context.js';
import { requestCancellation } from '../../services/tasks/cancel.js';
import { getTask } from '../../services/tasks/tasks.js';
import { awaitFinalTaskFor, awaitTaskUpdate, MAX_TOOL_WAIT_SECONDS } from '../../services/waiting/task-watch.js';
import { hintFor, success } from '../results.js';
import type { McpTypes } from '../sdk.js';

/**
 * MCP Tasks (protocol revision 2025-11-25, the SDK's experimental tasks support), stateless: the
 * MCP task IS the service's task (taskId = task_id), so any instance answers tasks/get and
 * tasks/result from the store, and nothing is kept per session. Only submit_human_task can be
 * called as a task (execution.taskSupport "optional"); plain calls keep working.
 */

type Task = Readonly<PublicTask>;

/** Declared with `initialize`: task-augmented tools/call, tasks/get, tasks/result and tasks/cancel (services/tasks/cancel.ts). */
export const TASKS_CAPABILITY: NonNullable<ServerCapabilities['tasks']> = { requests: { tools: { call: {} } }, cancel: {} };

/** The one tool that may be called as a task. */
export const TASK_TOOL = 'submit_human_task';

/**
 * How often to look again (both revisions): a second. The SDKs' task loops (v1 callToolStream,
 * ext-tasks' sessions) sleep this long after each tasks/get that did not end the task, and
 * tasks/get itself holds until the task changes (MCP_TASK_HOLD_SECONDS), so a delivery, rejection
 * or question reaches such a loop within about this interval, whenever it happens. A longer
 * interval is a longer blind spot after every change (30 s saw a delivery 30 s late); a shorter
 * one only adds requests, as a held tasks/get is already waiting most of the time.
 */
export const TASK_POLL_INTERVAL_MS = 1000;

/** tasks/result holds at most this long for the final state, then asks to be called again. */
export const TASK_RESULT_SLICE_SECONDS = MAX_TOOL_WAIT_SECONDS;

/**
 * The task as tasks/get should report it: at once when final (or when `answerAtOnce` says so),
 * otherwise once it changes or MCP_TASK_HOLD_SECONDS (default 20, below client timeouts) pass, so a polling loop sees a delivery
 * within moments instead of a poll interval later.
 */
export async function heldTask(deps: ServiceDeps, task: Task, signal: AbortSignal | undefined, answerAtOnce = false): Promise<Task> {
  if (answerAtOnce || isFinal(task.status)) return task;
  return awaitTaskUpdate(deps, task.task_id, { waitSeconds: deps.config.mcpTaskHoldSeconds, knownUpdatedAt: task.updated_at, signal });
}

/** What the task is at, for statusMessage (2026-07-28 reuses it, see tasks-ext.ts). */
export function statusMessage(task: Task): string {
  switch (task.status) {
    case 'accepted':
      return task.eta ? `Accepted by the human operator, expected by ${task.eta}.` : 'Accepted by the human operator, in progress.';
    case 'delivered':
      return 'Delivered: tasks/result returns the task with operator_notes and the signed receipt.';
    case 'rejected':
      return `Rejected by the human operator: ${(task.operator_notes ?? 'no reason given').slice(0, 500)}`;
    default:
      return 'Submitted: waiting for a human operator to review it.';
  }
}

/**
 * The MCP view of a service task: working while submitted or accepted, input_required while a
 * question of the operator awaits an answer (the question is the statusMessage; the answer goes
 * through answer_operator_question), cancelled once withdrawn at the requester's request,
 * completed once otherwise final.
 */
export function mcpTaskOf(task: Task, now: Date): McpTask {
  const final = isFinal(task.status);
  const question = final ? undefined : openQuestion(task.questions);
  const view: McpTask = {
    taskId: task.task_id,
    status: isWithdrawal(task) ? 'cancelled' : final ? 'completed' : question ? 'input_required' : 'working',
    statusMessage: question ? question.question : statusMessage(task),
    createdAt: task.created_at,
    lastUpdatedAt: task.updated_at,
    // Kept as long as the service keeps the task.
    ttl: null,
  };
  if (!final) view.pollInterval = TASK_POLL_INTERVAL_MS;
  return view;
}

/** The final tool result: the task as structuredContent; a rejection is a result with isError. */
export function finalResult(mcp: McpTypes, task: Task): CallToolResult {
  const result = success(task);
  if (task.status === 'rejected') {
    result.isError = true;
    result.content.push({
      type: 'text',
      text: `Hint: the human operator rejected this task (reason in operator_notes: ${(task.operator_notes ?? 'none given').slice(0, 500)}). Do not resubmit it unchanged; change what the reason names, or ask with message_human_operator.`,
    });
  }
  result._meta = { [mcp.RELATED_TASK_META_KEY]: { taskId: task.task_id } };
  return result;
}

/** A refusal where the protocol has no room for a result (a task-augmented call): a JSON-RPC error carrying the REST error body. */
export function refusalError(mcp: McpTypes, tool: string, error: AppError): McpError {
  const body = error.toBody();
  const { ErrorCode, McpError } = mcp;
  return new McpError(error.status >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidParams, `${body.message} Hint: ${hintFor(tool, body)}`, body);
}

/** The service task behind an MCP task id; unknown ids are the protocol's "task not found". */
async function serviceTask(mcp: McpTypes, deps: ServiceDeps, taskId: string): Promise<Task> {
  const { ErrorCode, McpError } = mcp;
  try {
    return await getTask(deps, taskId);
  } catch (error) {
    if (isAppError(error) && error.code === 'task_not_found') throw new McpError(ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    throw error;
  }
}

/** The task a task-augmented submit_human_task call created, as its CreateTaskResult. */
export async function createdTask(mcp: McpTypes, deps: ServiceDeps, taskId: string): Promise<CreateTaskResult> {
  return { task: mcpTaskOf(await serviceTask(mcp, deps, taskId), deps.clock.now()) };
}

export function registerTaskHandlers(mcp: McpTypes, server: Server, deps: ServiceDeps, httpRequest: FastifyRequest): void {
  const { CancelTaskRequestSchema, ErrorCode, GetTaskPayloadRequestSchema, GetTaskRequestSchema, McpError, RequestSchema } = mcp;
  // The SDK parses a request against its schema before the handler runs, and a parse failure
  // answers -32603 with the validator's text. The params are therefore parsed loosely here and
  // taskId checked by taskIdOf: a taskId that is not a string is -32602 invalid params.
  const loose = { params: RequestSchema.shape.params };
  const taskIdOf = (params: { [key: string]: unknown } | undefined): string => {
    const taskId = params?.taskId;
    if (typeof taskId !== 'string') throw new McpError(ErrorCode.InvalidParams, 'taskId must be a string (a task_id).');
    return taskId;
  };

  server.setRequestHandler(GetTaskRequestSchema.extend(loose), async (request, extra) => {
    const task = await heldTask(deps, await serviceTask(mcp, deps, taskIdOf(request.params)), extra.signal);
    return mcpTaskOf(task, deps.clock.now());
  });

  // Holds until the task is final, in one bounded slice (below the clients' request timeout);
  // a task still open then is an error that says to ask again, never a hang.
  server.setRequestHandler(GetTaskPayloadRequestSchema.extend(loose), async (request, extra) => {
    const taskId = taskIdOf(request.params);
    await serviceTask(mcp, deps, taskId);
    let task: Task;
    try {
      task = await awaitFinalTaskFor(deps, taskId, TASK_RESULT_SLICE_SECONDS, extra.signal);
    } catch (error) {
      if (isAppError(error)) throw refusalError(mcp, 'tasks/result', error);
      throw error;
    }
    if (!isFinal(task.status)) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Task ${task.task_id} is not finished yet (status ${task.status}): call tasks/result again, or tasks/get (it holds until the task changes).`,
        { task_id: task.task_id, status: task.status, pollInterval: TASK_POLL_INTERVAL_MS },
      );
    }
    return finalResult(mcp, task);
  });

  // tasks/cancel (services/tasks/cancel.ts): a submitted task nobody accepted is withdrawn at once
  // (cancelled); an accepted one gets the operator a withdrawal request and is answered unchanged,
  // its statusMessage saying the operator decides; a final task is the protocol's -32602.
  server.setRequestHandler(CancelTaskRequestSchema.extend(loose), async (request) => {
    const task = await serviceTask(mcp, deps, taskIdOf(request.params));
    let cancellation: Awaited<ReturnType<typeof requestCancellation>>;
    try {
      cancellation = await requestCancellation({ deps, caller: { ...callerFrom(httpRequest, deps), idempotencyKey: undefined } }, task.task_id, 'mcp');
    } catch (error) {
      if (isAppError(error)) throw refusalError(mcp, 'tasks/cancel', error);
      throw error;
    }
    const view = mcpTaskOf(cancellation.task, deps.clock.now());
    if (cancellation.outcome === 'final') {
      throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${view.status} (${cancellation.task.status}).`);
    }
    if (cancellation.outcome === 'requested') view.statusMessage = cancellation.message;
    return view;
  });
}
