import { A2AError } from '../domain/a2a/errors.js';
import { validationFailed } from '../domain/errors.js';
import { awaitStopState, followTask, type StreamItem } from '../services/a2a/follow.js';
import { a2aState, isFinalState, isStopState, toA2ATask } from '../services/a2a/mapping.js';
import { optionalCount, parseSendRequest, sendA2AMessage } from '../services/a2a/messages.js';
import { getA2ATask, listA2ATasks, taskInContext } from '../services/a2a/tasks.js';
import type { Caller, ServiceDeps } from '../services/context.js';
import { FINAL_TASK_MESSAGE, requestCancellation } from '../services/tasks/cancel.js';
import type { Closable } from '../services/waiting/task-waits.js';
import { pushConfigMethods } from './push.js';

/**
 * The A2A methods, once for both bindings (docs/a2a.md): each takes the request's params (the
 * JSON-RPC `params`, or what the HTTP+JSON route put together from its path, query and body)
 * and answers a result, or a stream of StreamResponses for the two streaming methods. Checks that
 * can refuse a stream (an unknown or final task) run before the stream starts, so the refusal is
 * an ordinary error response.
 */

export interface MethodContext {
  deps: ServiceDeps;
  caller: () => Caller;
  /** The held response: the hold ends when it closes. */
  closes: Closable;
}

export type MethodOutcome = { result: unknown } | { stream: AsyncGenerator<StreamItem> };

type Method = (ctx: MethodContext, params: Record<string, unknown>) => Promise<MethodOutcome>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function taskIdOf(params: Record<string, unknown>, field = 'id'): string {
  const id = params[field];
  if (typeof id !== 'string' || id === '' || id.length > 200)
    throw validationFailed([`${field}: required, a task id`], 'The A2A request has invalid fields; see details.');
  return id;
}

const send: Method = async (ctx, params) => {
  const request = parseSendRequest(params);
  const { deps } = ctx;
  const outcome = await sendA2AMessage(deps, ctx.caller(), request);
  let task = outcome.task;
  if (request.pushConfig !== undefined) await pushConfigMethods.fromSendConfiguration(deps, task.task_id, request.pushConfig);
  if (!request.returnImmediately && !isStopState(a2aState(task))) task = await awaitStopState(deps, task.task_id, ctx.closes);
  return { result: { task: toA2ATask(task, outcome.contextId, { baseUrl: deps.config.baseUrl, historyLength: request.historyLength }) } };
};

const sendStreaming: Method = async (ctx, params) => {
  const request = parseSendRequest(params);
  const { deps } = ctx;
  const outcome = await sendA2AMessage(deps, ctx.caller(), request);
  if (request.pushConfig !== undefined) await pushConfigMethods.fromSendConfiguration(deps, outcome.task.task_id, request.pushConfig);
  return {
    stream: followTask(deps, outcome.task, outcome.contextId, { baseUrl: deps.config.baseUrl, historyLength: request.historyLength, closes: ctx.closes }),
  };
};

const getTask: Method = async (ctx, params) => ({
  result: await getA2ATask(ctx.deps, taskIdOf(params), optionalCount(params.historyLength, 'historyLength')),
});

const listTasks: Method = async (ctx, params) => {
  const text = (name: string): string | undefined => {
    const value = params[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw validationFailed([`${name}: must be a string`], 'The ListTasks request has invalid fields; see details.');
    return value;
  };
  const flag = params.includeArtifacts;
  if (flag !== undefined && typeof flag !== 'boolean')
    throw validationFailed(['includeArtifacts: must be a boolean'], 'The ListTasks request has invalid fields; see details.');
  const pageSize = params.pageSize;
  if (pageSize !== undefined && typeof pageSize !== 'number')
    throw validationFailed(['pageSize: must be an integer from 1 to 100'], 'The ListTasks request has invalid fields; see details.');
  return {
    result: await listA2ATasks(ctx.deps, ctx.caller(), {
      contextId: text('contextId'),
      status: text('status'),
      pageSize,
      pageToken: text('pageToken'),
      historyLength: optionalCount(params.historyLength, 'historyLength'),
      statusTimestampAfter: text('statusTimestampAfter'),
      includeArtifacts: flag,
    }),
  };
};

const subscribe: Method = async (ctx, params) => {
  const { deps } = ctx;
  const { task, contextId } = await taskInContext(deps, taskIdOf(params));
  if (isFinalState(a2aState(task))) {
    throw new A2AError('UnsupportedOperation', `Task ${task.task_id} is final (${task.status}): there is nothing left to subscribe to. GetTask reads it.`);
  }
  return { stream: followTask(deps, task, contextId, { baseUrl: deps.config.baseUrl, historyLength: undefined, closes: ctx.closes }) };
};

/**
 * CancelTask (contract "A2A 1.0"): requestCancellation, as REST and MCP. A task nobody accepted is
 * withdrawn at once (TASK_STATE_CANCELED); an accepted one gets the operator a withdrawal request
 * and comes back unchanged (the operator decides); a final one is TaskNotCancelableError.
 */
const cancel: Method = async (ctx, params) => {
  const { deps } = ctx;
  const cancellation = await requestCancellation({ deps, caller: ctx.caller() }, taskIdOf(params), 'a2a');
  if (cancellation.outcome === 'final') {
    throw new A2AError('TaskNotCancelable', `Task ${cancellation.task.task_id} is final (${cancellation.task.status}): ${FINAL_TASK_MESSAGE}`);
  }
  const { contextId } = await taskInContext(deps, cancellation.task.task_id);
  return { result: toA2ATask(cancellation.task, contextId, { baseUrl: deps.config.baseUrl }) };
};

const extendedCard: Method = async () => {
  throw new A2AError('UnsupportedOperation', 'This agent declares no extended agent card: /.well-known/agent-card.json is the whole card.');
};

const pushMethod =
  (name: 'create' | 'get' | 'list' | 'remove'): Method =>
  async (ctx, params) => ({ result: await pushConfigMethods[name](ctx.deps, params) });

export const METHODS: Record<string, Method> = {
  SendMessage: send,
  SendStreamingMessage: sendStreaming,
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancel,
  SubscribeToTask: subscribe,
  CreateTaskPushNotificationConfig: pushMethod('create'),
  GetTaskPushNotificationConfig: pushMethod('get'),
  ListTaskPushNotificationConfigs: pushMethod('list'),
  DeleteTaskPushNotificationConfig: pushMethod('remove'),
  GetExtendedAgentCard: extendedCard,
};

/** Runs one method: unknown names are MethodNotFound, params that are not an object InvalidParams. */
export async function runMethod(ctx: MethodContext, method: string, params: unknown): Promise<MethodOutcome> {
  const run = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (!run) throw new A2AError('MethodNotFound', `Method not found: ${method.slice(0, 80)}. A2A 1.0 methods: ${Object.keys(METHODS).join(', ')}.`);
  if (params !== undefined && !isObject(params)) throw new A2AError('InvalidParams', 'params: must be an object');
  return run(ctx, camelCased(params ?? {}));
}

/**
 * ProtoJSON parsers accept a field's proto name as well as its JSON name (`history_length` for
 * `historyLength`), and some clients send those: the request's own fields are read either way
 * (the JSON name wins when both are given). Free-form values (a data part, metadata) are left as sent.
 */
function camelCased(params: Record<string, unknown>): Record<string, unknown> {
  const rename = (object: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...object };
    for (const [key, value] of Object.entries(object)) {
      if (!key.includes('_')) continue;
      const camel = key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
      if (!(camel in out)) out[camel] = value;
      delete out[key];
    }
    return out;
  };
  const out = rename(params);
  if (isObject(out.configuration)) out.configuration = rename(out.configuration);
  if (isObject(out.message)) {
    const message = rename(out.message);
    if (Array.isArray(message.parts)) message.parts = message.parts.map((part) => (isObject(part) ? rename(part) : part));
    out.message = message;
  }
  return out;
}
