import type { CreateTaskResultV2, DetailedTaskV2, InputRequestsV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../../domain/errors.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { isWithdrawal } from '../../domain/tasks/withdrawal.js';
import { callerFrom } from '../../http/client.js';
import type { ServiceDeps } from '../../services/context.js';
import { requestCancellation } from '../../services/tasks/cancel.js';
import { getTask } from '../../services/tasks/tasks.js';
import { hintFor, success } from '../results.js';
import { heldTask, statusMessage, TASK_POLL_INTERVAL_MS } from '../revision-2025-11-25/tasks.js';
import { answerOpenQuestion, type OpenQuestion, openQuestionOf } from './operator-questions.js';

/**
 * The tasks extension `io.modelcontextprotocol/tasks` on protocol revision 2026-07-28 (SEP-2663),
 * in the wire format of @modelcontextprotocol/ext-tasks 0.2.x (core/v2). Stateless like the
 * 2025-11-25 tasks (tasks.ts): the MCP task IS the service task (taskId = task_id), read from the
 * store on every request, so any instance answers.
 *
 * submitted/accepted → working (input_required while the operator's question awaits an answer,
 * see operator-questions.ts); delivered → completed with the tool result inline; rejected →
 * failed with the reason (cancelled when withdrawn at the requester's request). tasks/update
 * answers the open question; tasks/cancel withdraws a task nobody accepted at once, and otherwise
 * records a withdrawal request and says the operator decides (services/tasks/cancel.ts).
 */

type Task = Readonly<PublicTask>;

export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';

/** JSON-RPC codes of the extension (SEP-2663) and of JSON-RPC itself. */
export const RPC = { invalidRequest: -32600, invalidParams: -32602, internalError: -32603, extensionNotDeclared: -32021, taskFailed: -32000 } as const;

/** A JSON-RPC error: the v2 SDK answers any thrown error with a numeric code as that error. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** What the operator asks, as an elicitation: one free-text `answer` field (1–5000 characters, as over REST). */
function inputRequestsFor(question: OpenQuestion): InputRequestsV2 {
  return {
    [question.questionId]: {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: question.question,
        requestedSchema: {
          type: 'object',
          properties: { answer: { type: 'string', title: 'Your answer to the operator', minLength: 1, maxLength: 5000 } },
          required: ['answer'],
        },
      },
    },
  };
}

function statusMessageOf(task: Task, question: OpenQuestion | null): string {
  if (question) return `The human operator asks: ${question.question.slice(0, 500)}`;
  if (task.status === 'delivered') return 'Delivered: the result is the task with operator_notes and the signed receipt.';
  return statusMessage(task);
}

/** A plain JSON copy, typed as the extension's JSON value (the task and results are JSON already). */
function json<T>(value: object): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The extension's view of a service task. */
export function detailedTaskOf(task: Task): DetailedTaskV2 {
  const question = openQuestionOf(task);
  const base = {
    taskId: task.task_id,
    statusMessage: statusMessageOf(task, question),
    createdAt: task.created_at,
    lastUpdatedAt: task.updated_at,
    ttlMs: null,
  };
  if (task.status === 'delivered') {
    return { ...base, status: 'completed', result: json({ resultType: 'complete', ...success(task) }) };
  }
  if (isWithdrawal(task)) return { ...base, status: 'cancelled' };
  if (task.status === 'rejected') {
    const reason = task.operator_notes ?? 'no reason given';
    return { ...base, status: 'failed', error: { code: RPC.taskFailed, message: `Rejected by the human operator: ${reason.slice(0, 500)}`, data: json(task) } };
  }
  if (question) return { ...base, status: 'input_required', inputRequests: inputRequestsFor(question), pollIntervalMs: TASK_POLL_INTERVAL_MS };
  return { ...base, status: 'working', pollIntervalMs: TASK_POLL_INTERVAL_MS };
}

/** The answer to a tools/call that created a task. */
export function createdTaskOf(task: Task): CreateTaskResultV2 {
  const { status, taskId, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = detailedTaskOf(task);
  return {
    resultType: 'task',
    taskId,
    status,
    createdAt,
    lastUpdatedAt,
    ttlMs,
    ...(statusMessage ? { statusMessage } : {}),
    ...(pollIntervalMs ? { pollIntervalMs } : {}),
  };
}

/** A refusal where the extension has no result to carry it: a JSON-RPC error with the contract's error body. */
export function rpcRefusal(operation: string, error: AppError): RpcError {
  const body = error.toBody();
  return new RpcError(error.status >= 500 ? RPC.internalError : RPC.invalidParams, `${body.message} Hint: ${hintFor(operation, body)}`, body);
}

/** Whether the request's envelope declares the extension (per request: there is no session). */
export function declaresTasks(clientCapabilities: unknown): boolean {
  if (typeof clientCapabilities !== 'object' || clientCapabilities === null) return false;
  const extensions = (clientCapabilities as { extensions?: unknown }).extensions;
  return typeof extensions === 'object' && extensions !== null && Object.hasOwn(extensions, TASKS_EXTENSION_ID);
}

function requireDeclared(method: string, clientCapabilities: unknown): void {
  if (!declaresTasks(clientCapabilities)) {
    throw new RpcError(
      RPC.extensionNotDeclared,
      `${method} belongs to the extension ${TASKS_EXTENSION_ID}: declare it in _meta["io.modelcontextprotocol/clientCapabilities"].extensions.`,
      { requiredExtension: TASKS_EXTENSION_ID },
    );
  }
}

function taskIdOf(params: Record<string, unknown>): string {
  const taskId = params.taskId;
  if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > 200)
    throw new RpcError(RPC.invalidParams, 'params.taskId must be the taskId of a task (a string).');
  return taskId;
}

/** The service task behind a taskId; an unknown one is -32602, as the extension says. */
export async function taskFor(deps: ServiceDeps, taskId: string): Promise<Task> {
  try {
    return await getTask(deps, taskId);
  } catch (error) {
    if (isAppError(error) && error.code === 'task_not_found') throw new RpcError(RPC.invalidParams, `Task not found: ${taskId.slice(0, 80)}`);
    throw error;
  }
}

export interface TaskRequestContext {
  deps: ServiceDeps;
  request: FastifyRequest;
  clientCapabilities: unknown;
  /** tasks/update's inputResponses, which the SDK lifts out of params before the handler runs. */
  inputResponses: unknown;
  signal: AbortSignal;
}

/** tasks/get: held briefly for a change (as on 2025-11-25), at once when final or a question waits. */
export async function getTaskExt(ctx: TaskRequestContext, params: Record<string, unknown>): Promise<DetailedTaskV2> {
  requireDeclared('tasks/get', ctx.clientCapabilities);
  const task = await taskFor(ctx.deps, taskIdOf(params));
  return detailedTaskOf(await heldTask(ctx.deps, task, ctx.signal, openQuestionOf(task) !== null));
}

/** The answer text in an elicitation response: `{action: "accept", content: {answer}}`. */
function answerIn(response: unknown): string | null {
  if (typeof response !== 'object' || response === null) return null;
  const { action, content } = response as { action?: unknown; content?: unknown };
  if (action !== 'accept' || typeof content !== 'object' || content === null) return null;
  const answer = (content as { answer?: unknown }).answer;
  return typeof answer === 'string' ? answer : null;
}

/** tasks/update: the requester's answer to the operator's open question. */
export async function updateTaskExt(ctx: TaskRequestContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  requireDeclared('tasks/update', ctx.clientCapabilities);
  const task = await taskFor(ctx.deps, taskIdOf(params));
  const responses = params.inputResponses ?? ctx.inputResponses;
  if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
    throw new RpcError(RPC.invalidParams, 'params.inputResponses must be an object keyed by the input request id.');
  }
  const question = openQuestionOf(task);
  if (!question) throw new RpcError(RPC.invalidParams, `Task ${task.task_id} has no open input request: the operator has asked nothing that awaits an answer.`);
  const response = (responses as Record<string, unknown>)[question.questionId];
  if (response === undefined) {
    throw new RpcError(RPC.invalidParams, `inputResponses has no response for the open input request "${question.questionId}".`, {
      inputRequests: inputRequestsFor(question),
    });
  }
  const answer = answerIn(response);
  if (answer === null) {
    throw new RpcError(RPC.invalidParams, 'The response must be {action: "accept", content: {answer: "<text>"}}; to withdraw the task use tasks/cancel.');
  }
  try {
    await answerOpenQuestion(ctx.deps, task.task_id, question.questionId, answer);
  } catch (error) {
    if (isAppError(error)) throw rpcRefusal('tasks/update', error);
    throw error;
  }
  return {};
}

/**
 * tasks/cancel: a task nobody accepted is withdrawn at once (`status` "rejected", the reason as
 * `message`); an accepted one gets the operator a withdrawal request and keeps its status (the
 * operator decides); a final task is -32602 invalid_transition.
 */
export async function cancelTaskExt(ctx: TaskRequestContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  requireDeclared('tasks/cancel', ctx.clientCapabilities);
  const task = await taskFor(ctx.deps, taskIdOf(params));
  try {
    const caller = { ...callerFrom(ctx.request, ctx.deps), idempotencyKey: undefined };
    const cancellation = await requestCancellation({ deps: ctx.deps, caller }, task.task_id, 'mcp');
    if (cancellation.outcome === 'final') {
      throw new AppError('invalid_transition', `Task ${task.task_id} is already ${cancellation.task.status}: there is nothing to withdraw.`);
    }
    return { task_id: task.task_id, status: cancellation.task.status, message_id: cancellation.message_id, message: cancellation.message };
  } catch (error) {
    if (isAppError(error)) throw rpcRefusal('tasks/cancel', error);
    throw error;
  }
}
