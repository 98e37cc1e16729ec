import { A2AError } from '../../domain/a2a/errors.js';
import { AppError, validationFailed } from '../../domain/errors.js';
import { CONTEXT_ID_PATTERN } from '../../domain/ids.js';
import { openQuestion } from '../../domain/questions/questions.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { isFinal } from '../../domain/tasks/task.js';
import { contextExists } from '../../store/tasks/tasks-repo.js';
import type { Caller, ServiceDeps } from '../context.js';
import { sendMessage } from '../messages/messages.js';
import { answerQuestion } from '../questions/questions.js';
import { getTask, submitTask } from '../tasks/tasks.js';
import { taskInContext } from './tasks.js';

/**
 * SendMessage and SendStreamingMessage (contract "A2A 1.0", docs/a2a.md): a message without a
 * taskId submits a task through submitTask (so limits, abuse control, duplicates, mails, webhooks
 * and receipts are those of every door); a message with one answers the open question through
 * answerQuestion, or else reaches the operator through sendMessage, linked to the task.
 */

/** The task request fields a data part may carry (everything else is the validator's warning, as over REST). */
const DEFAULT_TASK_TYPE = 'custom_human_in_the_loop';

/** What a SendMessageRequest asks, checked. */
export interface SendRequest {
  messageId: string;
  taskId: string | undefined;
  contextId: string | undefined;
  /** The text parts, joined with blank lines. */
  text: string;
  /** The one data part's object, if any. */
  data: Record<string, unknown> | undefined;
  /** configuration.returnImmediately: true answers at once; false (the default) holds. */
  returnImmediately: boolean;
  historyLength: number | undefined;
  /** configuration.taskPushNotificationConfig as sent, if any. */
  pushConfig: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(detail: string): AppError {
  return validationFailed([detail], 'The A2A request has invalid fields; see details.');
}

/** An optional non-negative integer parameter (historyLength): invalid params otherwise. */
export function optionalCount(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const number = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0) throw invalid(`${name}: must be a non-negative integer`);
  return number;
}

/** Checks a SendMessageRequest: one user message with text parts and at most one JSON object data part. */
export function parseSendRequest(params: unknown): SendRequest {
  if (!isObject(params)) throw invalid('params: must be a SendMessageRequest object');
  const { message, configuration } = params;
  if (!isObject(message)) throw invalid('message: required, a Message object');
  if (typeof message.messageId !== 'string' || message.messageId.trim() === '' || message.messageId.length > 255) {
    throw invalid('message.messageId: required, 1 to 255 characters (it is the idempotency key)');
  }
  if (message.role !== 'ROLE_USER') throw invalid('message.role: must be ROLE_USER');
  if (!Array.isArray(message.parts) || message.parts.length === 0) throw invalid('message.parts: required, at least one part');
  for (const field of ['taskId', 'contextId'] as const) {
    const value = message[field];
    if (value !== undefined && value !== '' && (typeof value !== 'string' || value.length > 200)) throw invalid(`message.${field}: must be a string`);
  }
  const texts: string[] = [];
  let data: Record<string, unknown> | undefined;
  for (const [i, part] of message.parts.entries()) {
    if (!isObject(part)) throw invalid(`message.parts[${i}]: must be a Part object`);
    const media = part.mediaType;
    if (media !== undefined && typeof media !== 'string') throw invalid(`message.parts[${i}].mediaType: must be a string`);
    if (typeof part.text === 'string') {
      if (media && !/^text\/plain(\s*;|$)/i.test(media)) {
        throw new A2AError('ContentTypeNotSupported', `message.parts[${i}]: text parts are read as text/plain, not ${media.slice(0, 80)}.`);
      }
      texts.push(part.text);
    } else if (part.data !== undefined) {
      if (media && !/^application\/json(\s*;|$)/i.test(media)) {
        throw new A2AError('ContentTypeNotSupported', `message.parts[${i}]: a data part is application/json, not ${media.slice(0, 80)}.`);
      }
      if (!isObject(part.data)) throw invalid(`message.parts[${i}].data: must be a JSON object of task request fields`);
      if (data !== undefined) throw invalid(`message.parts[${i}]: at most one data part`);
      data = part.data;
    } else if (part.url !== undefined || part.raw !== undefined) {
      throw new A2AError('ContentTypeNotSupported', 'File parts are not accepted: describe the task in text parts and give its fields in one data part.');
    } else {
      throw invalid(`message.parts[${i}]: needs text, data, url or raw`);
    }
  }
  const config = configuration === undefined || configuration === null ? {} : configuration;
  if (!isObject(config)) throw invalid('configuration: must be a SendMessageConfiguration object');
  if (config.returnImmediately !== undefined && typeof config.returnImmediately !== 'boolean')
    throw invalid('configuration.returnImmediately: must be a boolean');
  const nonEmpty = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return {
    messageId: message.messageId,
    taskId: nonEmpty(message.taskId),
    contextId: nonEmpty(message.contextId),
    text: texts.join('\n\n'),
    data,
    returnImmediately: config.returnImmediately === true,
    historyLength: optionalCount(config.historyLength, 'configuration.historyLength'),
    pushConfig: config.taskPushNotificationConfig ?? undefined,
  };
}

export interface SendOutcome {
  task: Readonly<PublicTask>;
  contextId: string;
  /** A new task (or the replay of one), as opposed to a turn on an existing one. */
  created: boolean;
}

/** Acts on a checked message: a new task, an answer, or a message to the operator. */
export async function sendA2AMessage(deps: ServiceDeps, caller: Caller, request: SendRequest): Promise<SendOutcome> {
  return request.taskId === undefined ? submitFromMessage(deps, caller, request) : continueTask(deps, caller, request, request.taskId);
}

async function submitFromMessage(deps: ServiceDeps, caller: Caller, request: SendRequest): Promise<SendOutcome> {
  if (request.contextId !== undefined) {
    if (!CONTEXT_ID_PATTERN.test(request.contextId) || !(await contextExists(deps.store.db, request.contextId))) {
      throw invalid('message.contextId: names no context this service issued; leave it out to start a new one');
    }
  }
  const fields = request.data ?? {};
  const raw: Record<string, unknown> = { ...fields };
  if (request.text.trim() !== '') raw.description = request.text;
  raw.task_type ??= DEFAULT_TASK_TYPE;
  if (raw.contact_email === undefined) raw.delivery ??= 'status_poll';
  const result = await submitTask(deps, { ...caller, idempotencyKey: request.messageId, contextId: request.contextId }, raw);
  const { task, contextId } = await taskInContext(deps, result.body.task_id);
  return { task, contextId, created: true };
}

async function continueTask(deps: ServiceDeps, caller: Caller, request: SendRequest, taskId: string): Promise<SendOutcome> {
  let found: Awaited<ReturnType<typeof taskInContext>>;
  try {
    found = await taskInContext(deps, taskId);
  } catch (error) {
    if (error instanceof AppError && error.code === 'task_not_found') throw new A2AError('TaskNotFound', `No task has the id "${taskId.slice(0, 80)}".`);
    throw error;
  }
  const { task, contextId } = found;
  if (request.contextId !== undefined && request.contextId !== contextId) throw invalid('message.contextId: is not the context of message.taskId');
  if (isFinal(task.status)) {
    throw new A2AError(
      'UnsupportedOperation',
      `Task ${task.task_id} is final (${task.status}): it takes no more messages. Send a new message to start a new task.`,
    );
  }
  if (request.text.trim() === '') throw invalid('message.parts: a message on a task needs a text part');
  const question = openQuestion(task.questions);
  if (question) {
    const answered = await answerQuestion(deps, { taskId: task.task_id, questionId: question.question_id, answer: request.text });
    return { task: answered, contextId, created: false };
  }
  // No question awaits: the text reaches the operator as a message linked to the task.
  const fields = request.data ?? {};
  await sendMessage(deps, caller, { ...fields, message: request.text, task_id: task.task_id });
  return { task: await getTask(deps, task.task_id), contextId, created: false };
}
