import type { Logger } from 'pino';
import type { WebhookSettings } from '../config.js';
import type { Clock } from '../domain/time.js';
import { iso } from '../domain/time.js';
import { activeSigningKey } from '../receipts/keys.js';
import { findPushConfigRow, type PushConfigRow } from '../store/a2a/push-configs-repo.js';
import type { Store } from '../store/db.js';
import { finishWebhookClaim, insertWebhookAttempt, type WebhookEventRow } from '../store/delivery/webhooks-repo.js';
import { postToTarget } from './send.js';
import { signWebhook, webBotAuthHeaders } from './sign.js';
import { type Target, TargetRefused } from './target.js';

/**
 * One delivery of one claimed webhook event: resolve and check the host, sign, POST to the checked
 * address, log the attempt and record the outcome under the claim. 2xx is delivered; 410 stops for
 * good; anything else is retried with exponential backoff and ±20 % jitter until
 * WEBHOOK_MAX_ATTEMPTS. The loop that claims events is services/delivery/webhook-worker.ts.
 *
 * An A2A push notification (a row with push_config_id) is sent the same way, with its config's
 * headers: `X-A2A-Notification-Token` and `Authorization`, and the A2A media type. Its config is
 * read at each attempt: once deleted, the row ends as `gone` without being sent.
 */

export interface DeliveryContext {
  store: Pick<Store, 'db'>;
  clock: Clock;
  log: Logger;
  settings: WebhookSettings;
  /** The claim token every write after the claim names. */
  token: string;
  resolveTarget(url: string): Promise<Target>;
  /** The service's origin (BASE_URL), named in each delivery's Web Bot Auth `Signature-Agent`. */
  signatureAgent: string;
}

/** Delay before attempt n+1 after n failed attempts: base·2^(n-1), at most max, ±20 % jitter. */
export function webhookRetryDelayMs(failedAttempts: number, settings: Pick<WebhookSettings, 'retryBaseMs' | 'retryMaxMs'>, random = Math.random): number {
  const delay = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.min(40, Math.max(0, failedAttempts - 1)));
  return Math.max(1, Math.round(delay * (0.8 + 0.4 * random())));
}

type Outcome = { statusCode: number; error: string | null } | { statusCode: null; error: string };

function describeError(error: unknown): string {
  if (error instanceof TargetRefused) return error.message;
  const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';
  const message = error instanceof Error ? error.message : String(error);
  // Error text is ours or Node's; cut it short, it is shown to the operator.
  return (code !== '' && !message.includes(code) ? `${code}: ${message}` : message).slice(0, 300);
}

/** The headers an A2A push notification adds to the signed ones (docs/a2a.md, "Push notifications"). */
export function pushHeaders(config: PushConfigRow): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/a2a+json' };
  if (config.token !== null) headers['x-a2a-notification-token'] = config.token;
  if (config.auth_scheme !== null && config.auth_credentials !== null) headers.authorization = `${config.auth_scheme} ${config.auth_credentials}`;
  return headers;
}

/** Delivers one claimed event and records the outcome under the claim. */
export async function deliverOne(deps: DeliveryContext, row: WebhookEventRow): Promise<void> {
  const { settings, token, resolveTarget } = deps;
  const attempt = Number(row.attempts) + 1;
  let extraHeaders: Record<string, string> = {};
  if (row.push_config_id !== null) {
    const config = await findPushConfigRow(deps.store.db, row.task_id, row.push_config_id);
    if (!config) {
      await finishWebhookClaim(deps.store.db, row.id, token, { status: 'gone', last_error: 'the push notification config was deleted' });
      deps.log.info({ event_id: row.id, task_id: row.task_id, push_config_id: row.push_config_id }, 'A2A push notification dropped: its config was deleted');
      return;
    }
    extraHeaders = pushHeaders(config);
  }
  const now = deps.clock.now();
  const started = performance.now();
  let outcome: Outcome;
  try {
    const target = await resolveTarget(row.url);
    const key = await activeSigningKey(deps.store.db, now);
    const timestamp = String(Math.floor(now.getTime() / 1000));
    const headers = {
      ...extraHeaders,
      'webhook-id': row.id,
      'webhook-timestamp': timestamp,
      'webhook-signature': signWebhook(row.id, timestamp, row.body, key.privateKey),
      // Also signed as Web Bot Auth does, with the same key, published in the service's directory.
      ...(await webBotAuthHeaders(row.url, deps.signatureAgent, key, now)),
    };
    const { statusCode } = await postToTarget(target, headers, row.body, settings.timeoutMs);
    outcome = { statusCode, error: statusCode >= 200 && statusCode < 300 ? null : `the receiver answered ${statusCode}` };
  } catch (error) {
    outcome = { statusCode: null, error: describeError(error) };
  }
  const at = iso(deps.clock.now());
  await insertWebhookAttempt(deps.store.db, {
    event_id: row.id,
    attempt,
    at,
    status_code: outcome.statusCode,
    error: outcome.error,
    duration_ms: Math.round(performance.now() - started),
  });
  const context = { event_id: row.id, task_id: row.task_id, event: row.event, attempt, status_code: outcome.statusCode };
  const recorded = { attempts: attempt, last_status_code: outcome.statusCode, last_error: outcome.error };
  let kept: boolean;
  if (outcome.error === null) {
    kept = await finishWebhookClaim(deps.store.db, row.id, token, { ...recorded, status: 'delivered', delivered_at: at });
    deps.log.info(context, 'webhook delivered');
  } else if (outcome.statusCode === 410) {
    kept = await finishWebhookClaim(deps.store.db, row.id, token, { ...recorded, status: 'gone' });
    deps.log.info(context, 'webhook receiver answered 410 Gone; no more attempts');
  } else if (attempt >= settings.maxAttempts) {
    kept = await finishWebhookClaim(deps.store.db, row.id, token, { ...recorded, status: 'failed' });
    deps.log.warn({ ...context, error: outcome.error }, 'webhook failed for good; the operator can retry it');
  } else {
    const retryAt = new Date(deps.clock.now().getTime() + webhookRetryDelayMs(attempt, settings));
    kept = await finishWebhookClaim(deps.store.db, row.id, token, { ...recorded, next_attempt_at: iso(retryAt) });
    deps.log[attempt === 1 ? 'warn' : 'debug']({ ...context, error: outcome.error, retry_at: iso(retryAt) }, 'webhook attempt failed; will retry');
  }
  if (!kept) deps.log.warn(context, 'webhook: this worker lost its claim during the attempt; the outcome is recorded by the new holder');
}
