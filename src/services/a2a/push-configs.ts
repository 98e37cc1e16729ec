import { randomUUID } from 'node:crypto';
import { AppError, validationFailed } from '../../domain/errors.js';
import { ANY_TASK_ID_PATTERN, newEventId } from '../../domain/ids.js';
import { CALLBACK_URL_MAX_CHARS, callbackUrlProblem } from '../../domain/tasks/callback-url.js';
import { iso } from '../../domain/time.js';
import {
  countPushConfigs,
  deletePushConfigRow,
  findPushConfigRow,
  goneConfigIds,
  listPushConfigRows,
  type PushConfigRow,
  stopPushNotifications,
  upsertPushConfig,
} from '../../store/a2a/push-configs-repo.js';
import { type Db, whenCommitted, withTransaction } from '../../store/db.js';
import { insertWebhookEvent } from '../../store/delivery/webhooks-repo.js';
import { findTask, lockTask, type TaskRow, toPublicTask } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';
import { type A2AStreamResponse, toStreamResponse } from './mapping.js';

/**
 * A2A push notification configs (contract "A2A 1.0", docs/a2a.md "Push notifications"): per
 * task, at most PUSH_CONFIGS_MAX, each a receiver URL under the webhook SSRF guard (the rules of
 * callback_url here, the resolving guard at delivery), an optional token (sent as
 * X-A2A-Notification-Token) and authentication (sent as Authorization). The A2A door's four
 * methods call these functions; the shapes in and out are A2A 1.0's TaskPushNotificationConfig in
 * its JSON form.
 *
 * Delivery (enqueuePushNotifications): every change A2A reports (a status change, a question, its
 * answer, the deliverable) queues one row per config into the webhook outbox, in the transaction
 * of the change, whose body is an A2A StreamResponse (services/a2a/mapping.ts). The webhook worker
 * sends them like any webhook: the same retries, Standard Webhooks and Web Bot Auth signatures,
 * plus the config's headers (webhooks/deliver.ts).
 */

export const PUSH_CONFIGS_MAX = 5;
const ID_MAX = 200;
const TOKEN_MAX = 1000;
const CREDENTIALS_MAX = 4000;
/** What a header value may hold: printable ASCII (no CR or LF, so nothing can be smuggled into the request). */
const HEADER_SAFE = /^[\x20-\x7e]*$/;
/** An HTTP authentication scheme is an RFC 9110 token. */
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;

export interface A2AAuthenticationInfo {
  scheme: string;
  credentials?: string;
}

/** TaskPushNotificationConfig as A2A's JSON names it. */
export interface A2APushConfig {
  id: string;
  taskId: string;
  url: string;
  token?: string;
  authentication?: A2AAuthenticationInfo;
}

export interface A2APushConfigList {
  configs: A2APushConfig[];
  /** Always "": every config of a task fits one page. */
  nextPageToken: string;
}

function toA2A(row: PushConfigRow): A2APushConfig {
  const config: A2APushConfig = { id: row.id, taskId: row.task_id, url: row.url };
  if (row.token !== null) config.token = row.token;
  if (row.auth_scheme !== null) {
    config.authentication = { scheme: row.auth_scheme };
    if (row.auth_credentials !== null) config.authentication.credentials = row.auth_credentials;
  }
  return config;
}

function taskNotFound(taskId: string): AppError {
  return new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}".`);
}

/** The A2A spec answers a config that does not exist with TaskNotFoundError: the same code here. */
function configNotFound(taskId: string, id: string): AppError {
  return new AppError('task_not_found', `Task ${taskId.slice(0, 80)} has no push notification config with the id "${id.slice(0, 80)}".`);
}

type Checked = Omit<PushConfigRow, 'task_id' | 'created_at'>;

function optionalString(value: unknown, field: string, max: number, errors: string[]): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') errors.push(`${field} must be a string`);
  else if (value.length > max) errors.push(`${field} must be at most ${max} characters`);
  else if (!HEADER_SAFE.test(value)) errors.push(`${field} must be printable ASCII (it is sent as a header)`);
  else return value;
  return null;
}

/** Every field error at once, each naming its field; a config that is not an object is one error. */
function checkConfig(raw: unknown, taskId: string, allowPrivate: boolean): Checked {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw validationFailed(['the push notification config must be an object: {url, id?, token?, authentication?}']);
  }
  const input = raw as Record<string, unknown>;
  const errors: string[] = [];
  let url = '';
  if (typeof input.url !== 'string' || input.url === '') errors.push('url is required: the receiver of the notifications, an https:// URL');
  else if (input.url.length > CALLBACK_URL_MAX_CHARS) errors.push(`url must be at most ${CALLBACK_URL_MAX_CHARS} characters`);
  else {
    const problem = callbackUrlProblem(input.url, allowPrivate);
    if (problem !== null) errors.push(`url ${problem}`);
    else url = input.url;
  }
  if (input.taskId !== undefined && input.taskId !== '' && input.taskId !== taskId) errors.push('taskId must be the task the config is created for');
  const id = optionalString(input.id, 'id', ID_MAX, errors) ?? randomUUID();
  const token = optionalString(input.token, 'token', TOKEN_MAX, errors);
  let scheme: string | null = null;
  let credentials: string | null = null;
  const auth = input.authentication;
  if (auth !== undefined && auth !== null) {
    if (typeof auth !== 'object' || Array.isArray(auth)) errors.push('authentication must be an object: {scheme, credentials?}');
    else {
      const { scheme: rawScheme, credentials: rawCredentials } = auth as Record<string, unknown>;
      if (typeof rawScheme !== 'string' || !SCHEME.test(rawScheme)) errors.push('authentication.scheme must be an HTTP authentication scheme, e.g. "Bearer"');
      else scheme = rawScheme;
      credentials = optionalString(rawCredentials, 'authentication.credentials', CREDENTIALS_MAX, errors);
    }
  }
  if (errors.length > 0) throw validationFailed(errors);
  return { id, url, token, auth_scheme: scheme, auth_credentials: credentials };
}

/**
 * Creates a config for the task (its id generated when none is given), or replaces the task's
 * config of that id. A sixth config: validation_failed. Unknown task: task_not_found.
 */
export async function createPushConfig(deps: ServiceDeps, taskId: string, raw: unknown): Promise<A2APushConfig> {
  if (!ANY_TASK_ID_PATTERN.test(taskId)) throw taskNotFound(taskId);
  const checked = checkConfig(raw, taskId, deps.config.webhooks.allowPrivate);
  const row: PushConfigRow = { ...checked, task_id: taskId, created_at: iso(deps.clock.now()) };
  await withTransaction(deps.store.db, async (trx) => {
    // The task's row lock (PostgreSQL) makes two creations count one after the other.
    await lockTask(trx, deps.store.dialect, taskId);
    if (!(await findTask(trx, taskId))) throw taskNotFound(taskId);
    const replacing = (await findPushConfigRow(trx, taskId, row.id)) !== undefined;
    if (!replacing && (await countPushConfigs(trx, taskId)) >= PUSH_CONFIGS_MAX) {
      throw validationFailed([`a task has at most ${PUSH_CONFIGS_MAX} push notification configs; delete one first`]);
    }
    await upsertPushConfig(trx, row);
  });
  deps.log.info({ task_id: taskId, push_config_id: row.id }, 'A2A push notification config saved');
  const saved = await findPushConfigRow(deps.store.db, taskId, row.id);
  return toA2A(saved ?? row);
}

export async function getPushConfig(deps: ServiceDeps, taskId: string, id: string): Promise<A2APushConfig> {
  await requireTask(deps, taskId);
  const row = await findPushConfigRow(deps.store.db, taskId, id);
  if (!row) throw configNotFound(taskId, id);
  return toA2A(row);
}

export async function listPushConfigs(deps: ServiceDeps, taskId: string): Promise<A2APushConfigList> {
  await requireTask(deps, taskId);
  const rows = await listPushConfigRows(deps.store.db, taskId);
  return { configs: rows.map(toA2A), nextPageToken: '' };
}

/**
 * Deletes the config and stops its notifications still waiting in the outbox, in one transaction.
 * Idempotent, as the specification asks: a config that is not there is already deleted.
 */
export async function deletePushConfig(deps: ServiceDeps, taskId: string, id: string): Promise<void> {
  await requireTask(deps, taskId);
  const at = iso(deps.clock.now());
  const stopped = await withTransaction(deps.store.db, async (trx) => {
    if (!(await deletePushConfigRow(trx, taskId, id))) return undefined;
    return stopPushNotifications(trx, taskId, id, at);
  });
  if (stopped !== undefined) deps.log.info({ task_id: taskId, push_config_id: id, stopped }, 'A2A push notification config deleted');
}

async function requireTask(deps: ServiceDeps, taskId: string): Promise<void> {
  if (!ANY_TASK_ID_PATTERN.test(taskId) || !(await findTask(deps.store.db, taskId))) throw taskNotFound(taskId);
}

/**
 * Queues the notifications of a change of `task` (the row after it) to each of its configs, in the
 * caller's transaction: a status update (the state with its message: a question, its answer, the
 * ETA, the reason of a rejection) and, once delivered, the deliverable as an artifact update before
 * it. A config whose receiver answered 410 Gone gets no more. Only for changes A2A reports: the
 * caller decides (services/delivery/webhooks.ts: not for a passed deadline or an approval step).
 */
export async function enqueuePushNotifications(db: Db, deps: Pick<ServiceDeps, 'clock' | 'webhookNudge' | 'config'>, task: TaskRow): Promise<void> {
  const configs = await listPushConfigRows(db, task.id);
  if (configs.length === 0) return;
  const gone = await goneConfigIds(db, task.id);
  const publicTask = toPublicTask(task);
  const options = { baseUrl: deps.config.baseUrl };
  const events: { kind: string; body: A2AStreamResponse }[] = [];
  const artifact = task.status === 'delivered' ? toStreamResponse(publicTask, task.context_id, 'artifact', options) : undefined;
  if (artifact) events.push({ kind: 'artifactUpdate', body: artifact });
  const status = toStreamResponse(publicTask, task.context_id, 'status', options);
  if (status) events.push({ kind: 'statusUpdate', body: status });
  const now = deps.clock.now();
  let queued = 0;
  for (const config of configs) {
    if (gone.has(config.id)) continue;
    for (const event of events) {
      await insertWebhookEvent(
        db,
        {
          id: newEventId(now),
          task_id: task.id,
          // One row per change, kind and config: the same change cannot be queued twice.
          event: `a2a.${event.kind}/${config.id}/${task.updated_at}`,
          url: config.url,
          body: JSON.stringify(event.body),
          push_config_id: config.id,
        },
        iso(now),
      );
      queued += 1;
    }
  }
  if (queued > 0) whenCommitted(db, () => deps.webhookNudge.fire());
}
