import { type AppError, validationFailed } from '../../domain/errors.js';
import { CONTEXT_ID_PATTERN } from '../../domain/ids.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { iso, parseDateTime } from '../../domain/time.js';
import { countListedTasks, findContextId, listAgentTasks, listContextTasks, toPublicTask } from '../../store/tasks/tasks-repo.js';
import type { Caller, ServiceDeps } from '../context.js';
import { openToken, signToken } from '../runtime/signed-token.js';
import { getTask } from '../tasks/tasks.js';
import { type A2ATask, a2aState, toA2ATask } from './mapping.js';

/** A task and the A2A context it belongs to (task_not_found when no task has the id). */
export async function taskInContext(deps: ServiceDeps, taskId: string): Promise<{ task: Readonly<PublicTask>; contextId: string }> {
  const task = await getTask(deps, taskId);
  const contextId = (await findContextId(deps.store.db, task.task_id)) ?? '';
  return { task, contextId };
}

/** The A2A `Task` of a task, by its id (the id is the capability, as over REST). */
export async function getA2ATask(deps: ServiceDeps, taskId: string, historyLength?: number): Promise<A2ATask> {
  const { task, contextId } = await taskInContext(deps, taskId);
  return toA2ATask(task, contextId, { baseUrl: deps.config.baseUrl, historyLength });
}

/** ListTasks' page sizes (A2A 1.0: 1 to 100, 50 when not given). */
const PAGE_DEFAULT = 50;
const PAGE_MAX = 100;

const STATUS_OF_STATE: Record<string, string | undefined> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'accepted',
  TASK_STATE_INPUT_REQUIRED: undefined,
  TASK_STATE_COMPLETED: 'delivered',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_CANCELED: 'rejected',
  TASK_STATE_FAILED: 'rejected',
};

export interface ListRequest {
  contextId?: string | undefined;
  status?: string | undefined;
  pageSize?: number | undefined;
  pageToken?: string | undefined;
  historyLength?: number | undefined;
  statusTimestampAfter?: string | undefined;
  includeArtifacts?: boolean | undefined;
}

export interface ListResponse {
  tasks: A2ATask[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/**
 * ListTasks (contract "A2A 1.0"): the tasks of the given contextId (the context id is the
 * capability, as the task id is); without one, a verified agent's own tasks, and none for anyone
 * else. Newest update first, a page at a time down an index; the page token is the position of
 * the last task served, signed for this list. A state filter the status column cannot express
 * alone (INPUT_REQUIRED, and the three kinds of rejection) is applied to each page's rows, so such
 * a page may hold fewer tasks than its size.
 */
export async function listA2ATasks(deps: ServiceDeps, caller: Caller, request: ListRequest): Promise<ListResponse> {
  const pageSize = request.pageSize ?? PAGE_DEFAULT;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > PAGE_MAX) throw invalidList(`pageSize: must be an integer from 1 to ${PAGE_MAX}`);
  const state = request.status === undefined || request.status === '' || request.status === 'TASK_STATE_UNSPECIFIED' ? undefined : request.status;
  if (state !== undefined && !(state in STATUS_OF_STATE)) throw invalidList(`status: must be one of ${Object.keys(STATUS_OF_STATE).join(', ')}`);
  const after = request.statusTimestampAfter === undefined || request.statusTimestampAfter === '' ? undefined : parseDateTime(request.statusTimestampAfter);
  if (after === null) throw invalidList('statusTimestampAfter: must be an ISO 8601 date-time');
  const contextId = request.contextId === '' ? undefined : request.contextId;
  const agentKeyId = contextId === undefined ? caller.agent?.keyId : undefined;
  // Nobody's tasks without a context or a verified signature; a context the service never issued has none.
  const none = { tasks: [], nextPageToken: '', pageSize, totalSize: 0 };
  if (contextId === undefined && agentKeyId === undefined) return none;
  if (contextId !== undefined && !CONTEXT_ID_PATTERN.test(contextId)) return none;

  const scope = `cursor:a2a:${contextId ?? `agent:${agentKeyId}`}:${state ?? ''}`;
  let position: { updated_at: string; id: string } | undefined;
  if (request.pageToken !== undefined && request.pageToken !== '') {
    const text = openToken(deps.secret, scope, request.pageToken);
    const parsed = text === null ? null : (JSON.parse(text) as unknown);
    if (!Array.isArray(parsed) || typeof parsed[0] !== 'string' || typeof parsed[1] !== 'string') {
      throw invalidList('pageToken: was not issued for this list (or was changed); start again without one');
    }
    position = { updated_at: parsed[0], id: parsed[1] };
  }
  const page = { after: position, status: state === undefined ? undefined : STATUS_OF_STATE[state], limit: pageSize + 1 };
  const rows = contextId !== undefined ? await listContextTasks(deps.store.db, contextId, page) : await listAgentTasks(deps.store.db, agentKeyId ?? '', page);
  const served = rows.slice(0, pageSize);
  const last = served.at(-1);
  const more = rows.length > pageSize && last !== undefined;
  const mapping = { baseUrl: deps.config.baseUrl, historyLength: request.historyLength };
  const since = after === undefined ? undefined : iso(after);
  const tasks: A2ATask[] = [];
  for (const row of served) {
    const task = toPublicTask(row);
    if (state !== undefined && a2aState(task) !== state) continue;
    if (since !== undefined && task.updated_at < since) continue;
    const a2a = toA2ATask(task, row.context_id, mapping);
    if (request.includeArtifacts !== true) delete a2a.artifacts;
    tasks.push(a2a);
  }
  const totalSize = await countListedTasks(deps.store.db, contextId !== undefined ? { contextId } : { agentKeyId: agentKeyId ?? '' });
  return {
    tasks,
    nextPageToken: more ? signToken(deps.secret, scope, JSON.stringify([last.updated_at, last.id])) : '',
    pageSize,
    totalSize,
  };
}

function invalidList(detail: string): AppError {
  return validationFailed([detail], 'The ListTasks request has invalid fields; see details.');
}
