import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config, WebhookSettings } from '../config.js';
import type { Clock } from '../domain/time.js';
import { iso } from '../domain/time.js';
import { activeSigningKey } from '../receipts/keys.js';
import type { Store } from '../store/db.js';
import { claimDueWebhooks, finishClaim, insertWebhookAttempt, type WebhookEventRow } from '../store/webhooks-repo.js';
import type { Nudge } from './nudge.js';
import { postWebhook } from './send.js';
import { signWebhook } from './sign.js';
import { createTargetResolver, TargetRefused, type Target } from './target.js';

/**
 * The webhook worker: claims due events under a lease, delivers each (resolve and check the host,
 * sign, POST to the checked address) and records the outcome. Several deliveries run at once
 * (CONCURRENCY), each bounded by WEBHOOK_TIMEOUT_MS, so a receiver that hangs holds one slot for
 * that long and never the others. 2xx is delivered; 410 stops for good; anything else is retried
 * with exponential backoff and ±20 % jitter until WEBHOOK_MAX_ATTEMPTS.
 */

export interface WebhookWorkerDeps {
  store: Pick<Store, 'db' | 'dialect'>;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs' | 'webhooks'> & { mail: Pick<Config['mail'], 'pollMs'> };
  webhookNudge: Nudge;
}

export interface WebhookWorker {
  /** Stops claiming, and waits for the deliveries in flight (each ends within its timeout). */
  stop(): Promise<void>;
}

/** Deliveries in flight per instance. */
export const CONCURRENCY = 8;

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

/** Delivers one claimed event and records the outcome under the claim. */
export async function deliverOne(deps: WebhookWorkerDeps, resolveTarget: (url: string) => Promise<Target>, row: WebhookEventRow, token: string): Promise<void> {
  const settings = deps.config.webhooks;
  const attempt = Number(row.attempts) + 1;
  const now = deps.clock.now();
  const started = performance.now();
  let outcome: Outcome;
  try {
    const target = await resolveTarget(row.url);
    const key = await activeSigningKey(deps.store.db, now);
    const timestamp = String(Math.floor(now.getTime() / 1000));
    const headers = { 'webhook-id': row.id, 'webhook-timestamp': timestamp, 'webhook-signature': signWebhook(row.id, timestamp, row.body, key.privateKey) };
    const { statusCode } = await postWebhook(target, headers, row.body, settings.timeoutMs);
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
    kept = await finishClaim(deps.store.db, row.id, token, { ...recorded, status: 'delivered', delivered_at: at });
    deps.log.info(context, 'webhook delivered');
  } else if (outcome.statusCode === 410) {
    kept = await finishClaim(deps.store.db, row.id, token, { ...recorded, status: 'gone' });
    deps.log.info(context, 'webhook receiver answered 410 Gone; no more attempts');
  } else if (attempt >= settings.maxAttempts) {
    kept = await finishClaim(deps.store.db, row.id, token, { ...recorded, status: 'failed' });
    deps.log.warn({ ...context, error: outcome.error }, 'webhook failed for good; the operator can retry it');
  } else {
    const retryAt = new Date(deps.clock.now().getTime() + webhookRetryDelayMs(attempt, settings));
    kept = await finishClaim(deps.store.db, row.id, token, { ...recorded, next_attempt_at: iso(retryAt) });
    deps.log[attempt === 1 ? 'warn' : 'debug']({ ...context, error: outcome.error, retry_at: iso(retryAt) }, 'webhook attempt failed; will retry');
  }
  if (!kept) deps.log.warn(context, 'webhook: this worker lost its claim during the attempt; the outcome is recorded by the new holder');
}

export function startWebhookWorker(deps: WebhookWorkerDeps, options: { concurrency?: number; leaseMs?: number } = {}): WebhookWorker {
  const log = deps.log.child({ component: 'webhooks' });
  const workerDeps = { ...deps, log };
  const settings = deps.config.webhooks;
  const concurrency = options.concurrency ?? CONCURRENCY;
  // A delivery ends within its timeout; the lease outlasts it by a margin for DNS and the store.
  const leaseMs = options.leaseMs ?? settings.timeoutMs + 60_000;
  const resolveTarget = createTargetResolver({ dnsServers: deps.config.dnsServers, dnsTimeoutMs: deps.config.dnsTimeoutMs, allowPrivate: settings.allowPrivate });
  const token = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  const inFlight = new Set<Promise<void>>();
  let claiming = false;
  let again = false;
  let stopped = false;

  async function pump(): Promise<void> {
    if (stopped) return;
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    try {
      while (!stopped && inFlight.size < concurrency) {
        const now = deps.clock.now();
        const rows = await claimDueWebhooks(deps.store, token, concurrency - inFlight.size, iso(now), iso(new Date(now.getTime() + leaseMs)));
        for (const row of rows) start(row);
        if (rows.length === 0) break;
      }
    } catch (error) {
      log.error({ err: error }, 'webhooks: claiming failed; trying again at the next poll');
    } finally {
      claiming = false;
    }
    if (again) {
      again = false;
      void pump();
    }
  }

  function start(row: WebhookEventRow): void {
    const delivery = deliverOne(workerDeps, resolveTarget, row, token)
      .catch((error: unknown) => log.error({ err: error, event_id: row.id }, 'webhooks: recording an attempt failed; the lease will expire and it is retried'))
      .finally(() => {
        inFlight.delete(delivery);
        void pump();
      });
    inFlight.add(delivery);
  }

  const poller = setInterval(() => void pump(), deps.config.mail.pollMs);
  poller.unref();
  // The nudge comes from inside the enqueuing transaction: look a moment later, once it committed.
  const stopNudge = deps.webhookNudge.on(() => setTimeout(() => void pump(), 25).unref());
  void pump();
  log.info({ concurrency }, 'webhooks: worker started');

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      stopNudge();
      clearInterval(poller);
      while (claiming) await new Promise((resolve) => setTimeout(resolve, 5));
      await Promise.all([...inFlight]);
      log.info('webhooks: worker stopped');
    },
  };
}
