import { AppError } from '../../domain/errors.js';
import { ANY_TASK_ID_PATTERN, EVENT_ID_PATTERN, newEventId } from '../../domain/ids.js';
import type { Actor } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import { type Db, whenCommitted, withTransaction } from '../../store/db.js';
import {
  findWebhookEvent,
  insertWebhookEvent,
  listWebhookAttempts,
  listWebhookEvents,
  requeueWebhookEvent,
  taskWebhooksGone,
  type WebhookEventSummary,
  type WebhookStatus,
} from '../../store/delivery/webhooks-repo.js';
import { type TaskRow, toPublicTask } from '../../store/tasks/tasks-repo.js';
import { enqueuePushNotifications } from '../a2a/push-configs.js';
import type { ServiceDeps } from '../context.js';
import { recordAudit } from '../team/audit.js';

/**
 * Webhook events (contract "Webhooks"): queued in the transaction of the status change, with the
 * body fixed then (the public task exactly as GET returned it at that moment), and delivered by
 * services/delivery/webhook-worker.ts (webhooks/deliver.ts sends each). Plus the operator's view of them and the retry.
 */

export const WEBHOOK_EVENTS = { accepted: 'task.accepted', delivered: 'task.delivered', rejected: 'task.rejected' } as const;
/**
 * Events that are not a status change: a question of the operator, a passed deadline
 * (docs/questions.md), a proposal, approval or send-back of a task that needs several (docs/approvals.md).
 */
export type TaskNewsEvent = 'task.question' | 'task.deadline_passed' | 'task.approval';
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[keyof typeof WEBHOOK_EVENTS] | TaskNewsEvent;

/**
 * Queues the event of a task's new status (or the `news` given), when the task has a callback URL,
 * and the A2A push notifications of the change to the task's push configs (services/a2a/push-configs.ts).
 * Call inside the change's transaction. An event is queued once per task and kind; `occurrence`
 * names one of several of a kind (each approval of each round: `task.approval:<round>/<n>` in the
 * outbox, the body's type staying `task.approval`).
 */
export async function enqueueTaskEvent(
  db: Db,
  deps: Pick<ServiceDeps, 'clock' | 'webhookNudge' | 'config'>,
  task: TaskRow,
  news?: TaskNewsEvent,
  occurrence?: string,
): Promise<void> {
  // A2A reports status changes and questions; a passed deadline or an approval step changes no A2A state.
  if (news === undefined || news === 'task.question') await enqueuePushNotifications(db, deps, task);
  if (task.callback_url === null) return;
  const type = news ?? (Object.hasOwn(WEBHOOK_EVENTS, task.status) ? WEBHOOK_EVENTS[task.status as keyof typeof WEBHOOK_EVENTS] : undefined);
  if (type === undefined) return;
  // 410 Gone answers for the task, not one event: its later events are not sent either.
  if (await taskWebhooksGone(db, task.id)) return;
  const now = deps.clock.now();
  const body = JSON.stringify({ type, timestamp: iso(now), data: toPublicTask(task) });
  await insertWebhookEvent(
    db,
    { id: newEventId(now), task_id: task.id, event: occurrence === undefined ? type : `${type}:${occurrence}`, url: task.callback_url, body },
    iso(now),
  );
  whenCommitted(db, () => deps.webhookNudge.fire());
}

export interface WebhookAttemptView {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** What the operator sees of an event. Only the callback URL's origin: the path may carry a token. */
export interface WebhookEventView {
  id: string;
  task_id: string;
  event: string;
  target: string;
  status: WebhookStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  next_attempt_at: string | null;
  attempt_log: WebhookAttemptView[];
}

export const WEBHOOK_LIST_MAX = 200;

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

async function toViews(db: Db, rows: WebhookEventSummary[]): Promise<WebhookEventView[]> {
  const attempts = await listWebhookAttempts(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({
    id: row.id,
    task_id: row.task_id,
    event: row.event,
    target: originOf(row.url),
    status: row.status as WebhookStatus,
    attempts: Number(row.attempts),
    last_status_code: row.last_status_code === null ? null : Number(row.last_status_code),
    last_error: row.last_error,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    attempt_log: attempts
      .filter((a) => a.event_id === row.id)
      .map((a) => ({
        attempt: Number(a.attempt),
        at: a.at,
        status_code: a.status_code === null ? null : Number(a.status_code),
        error: a.error,
        duration_ms: Number(a.duration_ms),
      })),
  }));
}

/** Events of one task (or the newest of all), newest first, each with its attempts. */
export async function listWebhooks(
  deps: Pick<ServiceDeps, 'store'>,
  options: { taskId?: string | undefined; limit?: number | undefined },
): Promise<WebhookEventView[]> {
  if (options.taskId !== undefined && !ANY_TASK_ID_PATTERN.test(options.taskId)) return [];
  const limit = Math.min(WEBHOOK_LIST_MAX, Math.max(1, Math.trunc(options.limit ?? 50)));
  const rows = await listWebhookEvents(deps.store.db, { taskId: options.taskId, limit });
  return toViews(deps.store.db, rows);
}

/**
 * The operator's retry: an undelivered event becomes due now with a fresh attempt budget
 * (404 unknown id; 409 delivered, or a delivery in flight).
 */
export async function retryWebhook(deps: Pick<ServiceDeps, 'store' | 'clock' | 'log' | 'webhookNudge'>, actor: Actor, id: string): Promise<WebhookEventView> {
  const notFound = () => new AppError('not_found', 'No webhook event has that id.');
  if (!EVENT_ID_PATTERN.test(id)) throw notFound();
  const db = deps.store.db;
  // The retry and its audit entry commit together.
  const requeued = await withTransaction(db, async (trx) => {
    if (!(await requeueWebhookEvent(trx, id, iso(deps.clock.now())))) return false;
    const event = await findWebhookEvent(trx, id);
    await recordAudit(trx, deps, { actor, action: 'webhook.retried', taskId: event?.task_id ?? null, details: { event_id: id, event: event?.event } });
    return true;
  });
  if (!requeued) {
    const event = await findWebhookEvent(db, id);
    if (!event) throw notFound();
    const why = event.status === 'delivered' ? 'it was delivered' : 'a delivery attempt is in progress';
    throw new AppError('invalid_transition', `This webhook event cannot be retried now: ${why}.`, { from: event.status, to: 'pending' });
  }
  deps.log.info({ event_id: id }, 'webhook queued again by the operator');
  deps.webhookNudge.fire();
  const event = await findWebhookEvent(db, id);
  if (!event) throw notFound();
  const [view] = await toViews(db, [event]);
  if (!view) throw notFound();
  return view;
}
