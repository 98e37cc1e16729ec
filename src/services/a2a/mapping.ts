import { statusUrl } from '../../domain/network/urls.js';
import { openQuestion } from '../../domain/questions/questions.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { isWithdrawal } from '../../domain/tasks/withdrawal.js';
import { DEADLINE_REASON } from '../tasks/deadlines.js';

/**
 * The service's task as an A2A 1.0 `Task` (contract "A2A 1.0", docs/a2a.md): pure functions over
 * the public task, producing the protocol's JSON form (the ProtoJSON of a2a.proto: enum names as
 * strings, camelCase fields, a part is `{text}` | `{data}` | `{url, mediaType, filename}`). The
 * A2A door answers with these objects as they are; push notifications post them as their body.
 */

export type A2ATaskState =
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_REJECTED';

export interface A2APart {
  text?: string;
  data?: unknown;
  url?: string;
  mediaType?: string;
  filename?: string;
  metadata?: Record<string, unknown>;
}

export interface A2AMessage {
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: A2APart[];
  metadata?: Record<string, unknown>;
}

export interface A2ATaskStatus {
  state: A2ATaskState;
  message?: A2AMessage;
  timestamp: string;
}

export interface A2AArtifact {
  artifactId: string;
  name: string;
  parts: A2APart[];
  metadata?: Record<string, unknown>;
}

export interface A2ATask {
  id: string;
  contextId: string;
  status: A2ATaskStatus;
  artifacts?: A2AArtifact[];
  history?: A2AMessage[];
  metadata?: Record<string, unknown>;
}

export interface A2AStatusUpdate {
  taskId: string;
  contextId: string;
  status: A2ATaskStatus;
}

export interface A2AArtifactUpdate {
  taskId: string;
  contextId: string;
  artifact: A2AArtifact;
  append: boolean;
  lastChunk: boolean;
}

/** One event of a stream or one push notification body: exactly one member is set. */
export type A2AStreamResponse = { task: A2ATask } | { message: A2AMessage } | { statusUpdate: A2AStatusUpdate } | { artifactUpdate: A2AArtifactUpdate };

export interface MappingOptions {
  /** BASE_URL, for the artifact's `status_url`. */
  baseUrl: string;
  /** At most this many of the latest history messages; undefined: all of them; 0: none. */
  historyLength?: number | undefined;
}

export const FINAL_STATES: readonly A2ATaskState[] = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

/** A terminal state: nothing changes after it. */
export function isFinalState(state: A2ATaskState): boolean {
  return FINAL_STATES.includes(state);
}

/** Where a blocking send and a stream stop: a terminal state, or the task waits for the requester. */
export function isStopState(state: A2ATaskState): boolean {
  return isFinalState(state) || state === 'TASK_STATE_INPUT_REQUIRED';
}

/** The A2A state of a task: its status, with a question awaiting its answer and the kinds of rejection told apart. */
export function a2aState(task: Pick<PublicTask, 'status' | 'operator_notes' | 'awaiting_answer'>): A2ATaskState {
  switch (task.status) {
    case 'delivered':
      return 'TASK_STATE_COMPLETED';
    case 'rejected':
      if (isWithdrawal(task)) return 'TASK_STATE_CANCELED';
      return task.operator_notes === DEADLINE_REASON ? 'TASK_STATE_FAILED' : 'TASK_STATE_REJECTED';
    default:
      if (task.awaiting_answer) return 'TASK_STATE_INPUT_REQUIRED';
      // The retired statuses (imported tasks only) read as the current ones they stand for.
      return task.status === 'accepted' || task.status === 'in_progress' ? 'TASK_STATE_WORKING' : 'TASK_STATE_SUBMITTED';
  }
}

/** The words of `status.message` for a state without a question: what the requester can expect next. */
function statusText(task: Readonly<PublicTask>, state: A2ATaskState): string {
  switch (state) {
    case 'TASK_STATE_SUBMITTED':
      return 'Submitted: a human operator reviews every task and accepts or rejects it.';
    case 'TASK_STATE_WORKING':
      return task.eta === null ? 'Accepted: a human operator is working on it.' : `Accepted: a human operator is working on it (ETA ${task.eta}).`;
    case 'TASK_STATE_COMPLETED':
      return 'Delivered: the result is the artifact "deliverable", signed by the receipt in its metadata.';
    default:
      return task.operator_notes ?? 'Rejected.';
  }
}

function agentMessage(task: Readonly<PublicTask>, contextId: string, messageId: string, text: string): A2AMessage {
  return { messageId, contextId, taskId: task.task_id, role: 'ROLE_AGENT', parts: [{ text }] };
}

/** The task's status: its state, a message (the open question, role agent, or the status text) and when it last changed. */
export function a2aStatus(task: Readonly<PublicTask>, contextId: string): A2ATaskStatus {
  const state = a2aState(task);
  const question = state === 'TASK_STATE_INPUT_REQUIRED' ? openQuestion(task.questions) : undefined;
  const message = question
    ? agentMessage(task, contextId, question.question_id, question.question)
    : agentMessage(task, contextId, `${task.task_id}-status-${task.status_history.length}`, statusText(task, state));
  return { state, message, timestamp: task.updated_at };
}

/** The deliverable as the one artifact of a delivered task; undefined before. */
export function deliverableArtifact(task: Readonly<PublicTask>, baseUrl: string): A2AArtifact | undefined {
  if (task.status !== 'delivered') return undefined;
  const parts: A2APart[] =
    task.response_schema !== null && task.result !== null
      ? [{ data: task.result, mediaType: 'application/json' }]
      : [{ text: task.operator_notes ?? '', mediaType: 'text/plain' }];
  for (const file of task.attachments ?? []) parts.push({ url: file.url, mediaType: file.media_type, filename: file.name });
  const metadata: Record<string, unknown> = { status_url: statusUrl(baseUrl, task.task_id) };
  if (task.receipt !== undefined) metadata.receipt = task.receipt;
  if (task.deliverable_sha256 !== undefined) metadata.deliverable_sha256 = task.deliverable_sha256;
  if (task.receipt_issued_at !== undefined) metadata.receipt_issued_at = task.receipt_issued_at;
  return { artifactId: 'deliverable', name: 'deliverable', parts, metadata };
}

/** The conversation: the submitted message, then each question of the operator and the requester's answer, in order. */
export function a2aHistory(task: Readonly<PublicTask>, contextId: string): A2AMessage[] {
  const history: A2AMessage[] = [
    { messageId: `${task.task_id}-request`, contextId, taskId: task.task_id, role: 'ROLE_USER', parts: [{ text: task.description }] },
  ];
  for (const q of task.questions) {
    history.push(agentMessage(task, contextId, q.question_id, q.question));
    if (q.answer !== null) {
      history.push({ messageId: `${q.question_id}-answer`, contextId, taskId: task.task_id, role: 'ROLE_USER', parts: [{ text: q.answer }] });
    }
  }
  return history;
}

/** The A2A `Task` of a task; `historyLength` keeps the latest messages only (0: none). */
export function toA2ATask(task: Readonly<PublicTask>, contextId: string, options: MappingOptions): A2ATask {
  const artifact = deliverableArtifact(task, options.baseUrl);
  const history = a2aHistory(task, contextId);
  const length = options.historyLength;
  const kept = length === undefined ? history : length <= 0 ? [] : history.slice(-length);
  return {
    id: task.task_id,
    contextId,
    status: a2aStatus(task, contextId),
    artifacts: artifact ? [artifact] : [],
    history: kept,
    // The task's own extras, in the protocol's camelCase (the artifact's metadata keeps the contract's receipt fields).
    metadata: { taskType: task.task_type, statusUrl: statusUrl(options.baseUrl, task.task_id) },
  };
}

/**
 * One StreamResponse of a task: the whole `Task`, its status update, or its deliverable as an
 * artifact update (undefined when there is none yet).
 */
export function toStreamResponse(
  task: Readonly<PublicTask>,
  contextId: string,
  kind: 'task' | 'status' | 'artifact',
  options: MappingOptions,
): A2AStreamResponse | undefined {
  if (kind === 'task') return { task: toA2ATask(task, contextId, options) };
  if (kind === 'status') return { statusUpdate: { taskId: task.task_id, contextId, status: a2aStatus(task, contextId) } };
  const artifact = deliverableArtifact(task, options.baseUrl);
  return artifact ? { artifactUpdate: { taskId: task.task_id, contextId, artifact, append: false, lastChunk: true } } : undefined;
}

/**
 * What a subscriber is told about a change from `before` to `after`: the deliverable first when it
 * has just arrived, then the status when its state or its message changed. Nothing when neither did.
 */
export function changeEvents(before: Readonly<PublicTask>, after: Readonly<PublicTask>, contextId: string, options: MappingOptions): A2AStreamResponse[] {
  const events: A2AStreamResponse[] = [];
  if (before.status !== 'delivered' && after.status === 'delivered') {
    const artifact = toStreamResponse(after, contextId, 'artifact', options);
    if (artifact) events.push(artifact);
  }
  const was = a2aStatus(before, contextId);
  const now = a2aStatus(after, contextId);
  if (was.state !== now.state || was.message?.messageId !== now.message?.messageId || was.message?.parts[0]?.text !== now.message?.parts[0]?.text) {
    events.push({ statusUpdate: { taskId: after.task_id, contextId, status: now } });
  }
  return events;
}
