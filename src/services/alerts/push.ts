import { createECDH, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type WebPush from 'web-push';
import { AppError, validationFailed } from '../../domain/errors.js';
import { loadOnce } from '../../domain/load-once.js';
import { parseQuestions } from '../../domain/questions/questions.js';
import type { Actor } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import { type AlertAudience, alertAudience, messageAlertTask } from '../../mail/alert-audience.js';
import type { Change } from '../../store/change-feed.js';
import type { Db } from '../../store/db.js';
import { findMessage } from '../../store/messages/messages-repo.js';
import { getOrCreateSetting } from '../../store/settings-repo.js';
import { findTask } from '../../store/tasks/tasks-repo.js';
import {
  claimNotice,
  countSubscriptions,
  deleteSubscription,
  listSubscriptions,
  noteSubscriptionError,
  type PushSubscriptionRow,
  upsertSubscription,
} from '../../store/team/push-repo.js';
import { postToTarget } from '../../webhooks/send.js';
import { createTargetResolver } from '../../webhooks/target.js';
import { storedProposal } from '../console/approval-rounds.js';
import type { ServiceDeps } from '../context.js';

/**
 * Operator alerts by Web Push (contract "Operator alerts"): the console's browsers subscribe, and
 * a new task or message is announced within seconds to the devices of whoever is alerted, by the
 * rule mail follows (mail/alert-audience.ts): a device belongs to the operator whose session
 * subscribed it; the owner's devices (and those from before teams) get the alerts nobody on duty
 * takes. The announcer listens to the change feed, so the change itself never waits for (or fails
 * with) a push service; a claim row per task or message makes several instances announce it once.
 * Push endpoints come from browsers, so they are checked before every post (https only, no IP
 * literals, no redirects) and sent under the webhooks' SSRF guard (resolved, every address public,
 * the connection pinned to it): the sender must not become a way to reach internal addresses.
 */

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

export interface PushNotice {
  title: string;
  body: string;
  /** A console path (the tap opens it). */
  url: string;
  tag: string;
}

/**
 * A VAPID key pair exactly as web-push's generateVAPIDKeys makes one (P-256; base64url; the public
 * key uncompressed, 65 bytes; the private key 32 bytes), made with node:crypto so that starting
 * never loads web-push.
 */
function generateVapidKeys(): VapidKeys {
  const curve = createECDH('prime256v1');
  curve.generateKeys();
  const pad = (key: Buffer, length: number) => (key.length < length ? Buffer.concat([Buffer.alloc(length - key.length), key]) : key);
  return { publicKey: pad(curve.getPublicKey(), 65).toString('base64url'), privateKey: pad(curve.getPrivateKey(), 32).toString('base64url') };
}

/** The VAPID key pair: generated on first start, kept in the store, the same on every instance. */
export async function loadVapidKeys(db: Db): Promise<VapidKeys> {
  const stored = await getOrCreateSetting(db, 'vapid_keys', () => JSON.stringify(generateVapidKeys()));
  return JSON.parse(stored) as VapidKeys;
}

/** web-push (and its ASN.1 and big-number libraries) is loaded with the first notice, not at start. */
const loadWebPush: () => Promise<typeof WebPush> = loadOnce(() => import('web-push').then((module) => module.default));

const ENDPOINT_MAX = 2000;
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why a push endpoint must not be posted to, or null when it may. */
export function endpointProblem(endpoint: string, allowInsecureLoopback: boolean): string | null {
  if (endpoint.length > ENDPOINT_MAX) return `endpoint must be at most ${ENDPOINT_MAX} characters`;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'endpoint must be an absolute URL';
  }
  if (url.username || url.password) return 'endpoint must not carry credentials';
  if (url.protocol === 'http:' && allowInsecureLoopback && LOOPBACK.has(url.hostname)) return null;
  if (url.protocol !== 'https:') return 'endpoint must be an https: URL of a push service';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 || host === 'localhost' || host.endsWith('.localhost') || !host.includes('.'))
    return 'endpoint must name a push service by its public host name';
  return null;
}

function base64urlBytes(value: unknown): number {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+={0,2}$/.test(value)) return -1;
  return Buffer.from(value, 'base64url').length;
}

/**
 * `{endpoint, keys: {p256dh, auth}}`, as PushSubscription.toJSON() gives it, from the console
 * session of `actor` (the device is theirs). Every problem at once (422).
 */
export async function subscribePush(deps: ServiceDeps, actor: Actor, raw: unknown): Promise<{ subscribed: true; subscriptions: number }> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new AppError('malformed_request', 'The request body must be a JSON object.', {
      details: ['body must be a JSON object: {endpoint, keys: {p256dh, auth}}'],
    });
  }
  const body = raw as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } };
  const details: string[] = [];
  const endpoint = typeof body.endpoint === 'string' ? body.endpoint : '';
  if (endpoint === '') details.push('endpoint is required');
  else {
    const problem = endpointProblem(endpoint, deps.config.push.allowInsecureLoopback);
    if (problem) details.push(problem);
  }
  const keys = typeof body.keys === 'object' && body.keys !== null ? body.keys : {};
  if (base64urlBytes(keys.p256dh) !== 65) details.push('keys.p256dh must be a base64url P-256 public key (65 bytes)');
  if (base64urlBytes(keys.auth) !== 16) details.push('keys.auth must be a base64url 16-byte secret');
  if (details.length > 0) throw validationFailed(details);
  const row: PushSubscriptionRow = {
    id: `push-${randomBytes(12).toString('hex')}`,
    endpoint,
    p256dh: String(keys.p256dh),
    auth: String(keys.auth),
    created_at: iso(deps.clock.now()),
    last_error: null,
    operator_id: actor.kind === 'operator' ? actor.operatorId : null,
  };
  await upsertSubscription(deps.store.db, row);
  deps.log.info({ push_host: new URL(endpoint).host }, 'push: a device subscribed');
  return { subscribed: true, subscriptions: await countSubscriptions(deps.store.db) };
}

export async function unsubscribePush(deps: ServiceDeps, endpoint: unknown): Promise<boolean> {
  return typeof endpoint === 'string' && endpoint !== '' ? deleteSubscription(deps.store.db, endpoint) : false;
}

const SEND_TIMEOUT_MS = 10_000;
/** How long the announcer trusts its count of subscriptions (see startPushAnnouncer). */
const SUBSCRIBERS_TTL_MS = 2000;

/**
 * Posts one notice to the devices of its audience (the operators' own; for the fallback, every
 * device but those of disabled operators); gone ones (404, 410) are removed. Never throws.
 */
export async function pushToOperator(
  deps: ServiceDeps,
  notice: PushNotice,
  audience: AlertAudience,
): Promise<{ sent: number; removed: number; failed: number }> {
  const result = { sent: 0, removed: 0, failed: 0 };
  const subscriptions = await listSubscriptions(deps.store.db, audience.kind === 'operators' ? audience.operators.map((op) => op.id) : undefined);
  if (subscriptions.length === 0) return result;
  let webpush: typeof WebPush;
  try {
    webpush = await loadWebPush();
  } catch (error) {
    deps.log.warn({ err: error }, 'push: web-push could not be loaded; notification not delivered');
    result.failed = subscriptions.length;
    return result;
  }
  const vapid = { subject: deps.config.push.subject, ...deps.vapid };
  const payload = JSON.stringify(notice);
  // The webhooks' SSRF guard: the push service's name is resolved (DNS_SERVERS), refused unless
  // every address is public, and the connection pinned to the checked address (no rebinding).
  // Only the test flag (an http loopback push service) lets a private address through.
  const resolveTarget = createTargetResolver({
    dnsServers: deps.config.dnsServers,
    dnsTimeoutMs: deps.config.dnsTimeoutMs,
    allowPrivate: deps.config.push.allowInsecureLoopback,
    label: 'push service',
  });
  await Promise.all(
    subscriptions.map(async (sub) => {
      const host = (() => {
        try {
          return new URL(sub.endpoint).host;
        } catch {
          return '?';
        }
      })();
      try {
        const problem = endpointProblem(sub.endpoint, deps.config.push.allowInsecureLoopback);
        if (problem) throw new Error(problem);
        const request = webpush.generateRequestDetails({ endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } }, payload, {
          vapidDetails: vapid,
          TTL: 6 * 3600,
          urgency: 'high',
          topic: notice.tag.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 32),
        });
        const target = await resolveTarget(sub.endpoint);
        const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
        const { statusCode } = await postToTarget(target, headers, new Uint8Array(request.body), SEND_TIMEOUT_MS);
        if (statusCode === 404 || statusCode === 410) {
          await deleteSubscription(deps.store.db, sub.endpoint);
          result.removed += 1;
          deps.log.info({ push_host: host, status: statusCode }, 'push: subscription gone; removed');
        } else if (statusCode >= 200 && statusCode < 300) {
          result.sent += 1;
        } else {
          throw new Error(`push service answered ${statusCode}`);
        }
      } catch (error) {
        result.failed += 1;
        const message = error instanceof Error ? error.message : String(error);
        deps.log.warn({ push_host: host, error: message }, 'push: notification not delivered');
        await noteSubscriptionError(deps.store.db, sub.endpoint, message).catch(() => undefined);
      }
    }),
  );
  return result;
}

function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** New tasks, answers and passed deadlines only: a change to an older task (a view, a transition) is not news. */
const NEW_TASK_WINDOW_MS = 15 * 60_000;

/** What a change announces and the task it is about (its alert audience), or null (not news, or another instance announced it). */
async function noticeFor(deps: ServiceDeps, change: Change): Promise<{ notice: PushNotice; about: string | undefined } | null> {
  const db = deps.store.db;
  const now = deps.clock.now();
  if (change.kind === 'task') {
    const task = await findTask(db, change.taskId);
    if (!task) return null;
    const recent = (at: string | null) => at !== null && now.getTime() - Date.parse(at) <= NEW_TASK_WINDOW_MS;
    const kind = task.task_type.replace(/_/g, ' ');
    if (task.status === 'submitted' && task.seen_by_operator_at === null && recent(task.created_at)) {
      if (!(await claimNotice(db, `task:${task.id}`, iso(now)))) return null;
      // A new task is about no assignee yet (as its mail): every operator on duty.
      const notice = { title: `New task: ${kind}`, body: excerpt(task.description, 140), url: `/operator/tasks/${task.id}`, tag: `task-${task.id}` };
      return { notice, about: undefined };
    }
    // The requester answered a question (docs/questions.md): news once per answer, on whichever instance claims it.
    for (const question of parseQuestions(task.questions)) {
      if (question.answer === null || !recent(question.answered_at) || !(await claimNotice(db, `answer:${question.question_id}`, iso(now)))) continue;
      const notice = {
        title: `Answer: ${kind}`,
        body: excerpt(question.answer, 140),
        url: `/operator/tasks/${task.id}`,
        tag: `answer-${question.question_id}`,
      };
      return { notice, about: task.id };
    }
    // A deliverable waits for approvals (docs/approvals.md): every operator on duty, once per proposal.
    const proposal = storedProposal(task);
    if (task.status === 'accepted' && proposal && recent(proposal.at) && (await claimNotice(db, `approval:${task.id}:${proposal.round}`, iso(now)))) {
      const notice = {
        title: `Waiting for approval (${task.approvals_given} of ${task.approvals_required}): ${kind}`,
        body: excerpt(proposal.operator_notes, 140),
        url: '/operator/approve',
        tag: `approval-${task.id}`,
      };
      return { notice, about: undefined };
    }
    // An accepted task's deadline passed undelivered (services/tasks/deadlines.ts).
    if (task.status === 'accepted' && recent(task.deadline_passed_at) && (await claimNotice(db, `deadline:${task.id}`, iso(now)))) {
      const notice = { title: `Deadline passed: ${kind}`, body: excerpt(task.description, 140), url: `/operator/tasks/${task.id}`, tag: `deadline-${task.id}` };
      return { notice, about: task.id };
    }
    return null;
  }
  const message = await findMessage(db, change.messageId);
  if (!message || !(await claimNotice(db, `message:${message.id}`, iso(now)))) return null;
  const notice = {
    title: `New message${message.subject ? `: ${excerpt(message.subject, 60)}` : ''}`,
    body: excerpt(message.message, 140),
    url: change.taskId ? `/operator/tasks/${change.taskId}` : '/operator/messages',
    tag: `message-${message.id}`,
  };
  return { notice, about: messageAlertTask(message) };
}

/**
 * Listens to the change feed and announces new tasks and messages. Returns the stop function.
 * Every failure is logged and dropped: the operator still has the console and OPERATOR_EMAIL.
 */
export function startPushAnnouncer(deps: ServiceDeps): () => void {
  let chain = Promise.resolve();
  // Every instance hears every change: asking the store for the subscription count at each one
  // would cost a query per change per instance. The count is asked again after a short while, so a
  // device that subscribes through another instance is announced to within SUBSCRIBERS_TTL_MS.
  let subscribers: { count: number; until: number } | undefined;
  const hasSubscribers = async (): Promise<boolean> => {
    const now = Date.now();
    if (subscribers === undefined || subscribers.until <= now)
      subscribers = { count: await countSubscriptions(deps.store.db), until: now + SUBSCRIBERS_TTL_MS };
    return subscribers.count > 0;
  };
  return deps.changes.subscribe((change) => {
    chain = chain
      .then(async () => {
        if (!(await hasSubscribers())) return;
        const news = await noticeFor(deps, change);
        if (news) await pushToOperator(deps, news.notice, await alertAudience(deps.store.db, news.about));
      })
      .catch((error: unknown) => deps.log.warn({ err: error }, 'push: announcing a change failed'));
  });
}
