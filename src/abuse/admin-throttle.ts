import type { AdminThrottleSettings } from '../config.js';
import { AppError } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { countFailure } from '../store/team/signin-failures-repo.js';
import { noteRefusal } from './auto-block.js';
import { clientBlocked, matchBlock } from './blocklist.js';
import type { AbuseDeps, Caller } from './context.js';
import { policyItem } from './limits.js';

/**
 * Throttle of failed operator-key attempts (admin API and console sign-in), per client and over
 * all clients together, so neither one address nor many can guess the key quickly.
 *
 * - Only failures are counted and refused. A request with the right key (or a valid console
 *   session) is checked first and never refused by this throttle or by a block, from any
 *   address: an attacker cannot lock the operator out.
 * - Over ADMIN_FAILURES_PER_MINUTE for the client, or ADMIN_FAILURES_GLOBAL_PER_MINUTE in total,
 *   a failure is held ADMIN_FAILURE_DELAY_MS before its 429 `rate_limited`: with the connection
 *   caps, that bounds guesses per second however many requests are sent at once.
 * - Every failure counts toward auto-block (AUTO_BLOCK_REFUSALS); a blocked client's failures get
 *   403 `client_blocked`, after the same delay.
 * - One warn line per client and minute (and one when the global limit trips), not one per attempt.
 *
 * Per client and per operator (a passkey sign-in names one), the counts live in the store
 * (signin_failures, one atomic upsert per failure), so several instances together allow the limit
 * once; the in-memory count stands in while the store is down. The global limit is per instance.
 *
 * The same count bounds the audit log (`audit` of the answer): a client's failures under the limit
 * are audited one by one, the first over it is audited once as the throttling of the window, and
 * the rest are only counted (signin_failures): one address cannot add rows without bound.
 */

/** How a failed sign-in is audited: one row each, one row for the window's throttling, or only counted. */
export type FailureAudit = 'each' | 'throttled' | 'counted';

export interface FailedAttempt {
  /** The answer: the given refusal under the limits, else 429 (or 403 for a blocked client). */
  error: AppError;
  audit: FailureAudit;
  /** Start of the client's window (the store's minute), for the throttling entry. */
  window: string;
}

const WINDOW_MS = 60_000;
/** Clients remembered at most; past this the window's counts start over (an attack from that many addresses trips the global limit anyway). */
const MAX_TRACKED = 50_000;

interface Window {
  start: number;
  count: number;
}

export class AdminThrottle {
  /** RateLimit-Policy of the admin API and console: the failed-attempt limit is what is enforced there. */
  readonly policy: string;
  private readonly clients = new Map<string, Window>();
  private global: Window = { start: 0, count: 0 };
  private globalWarned = 0;

  constructor(private readonly settings: AdminThrottleSettings) {
    this.policy = policyItem(settings.perClientPerMinute, 60, 'address');
  }

  /**
   * Records a failed attempt and answers it: the given 401 while under the limits, else (after the
   * delay) 429, or 403 for a blocked client. Always returns the error to throw; never throws itself.
   */
  async failed(
    deps: AbuseDeps,
    caller: Caller,
    log: { warn(details: object, message: string): void },
    unauthorized: AppError,
    operatorId?: string,
  ): Promise<AppError> {
    return (await this.attempt(deps, caller, log, unauthorized, operatorId)).error;
  }

  /** As `failed`, and says how the attempt is to be audited (console sign-ins audit their failures). */
  async attempt(
    deps: AbuseDeps,
    caller: Caller,
    log: { warn(details: object, message: string): void },
    unauthorized: AppError,
    operatorId?: string,
  ): Promise<FailedAttempt> {
    // The service's clock, like every other window: a test's fixed clock never straddles a minute
    // (on a busy machine four sign-ins across two instances once did, and the store's window
    // started over between the third and the fourth).
    const now = deps.clock.now().getTime();
    const client = this.count(this.clients.get(caller.clientHash), now);
    if (!this.clients.has(caller.clientHash) && this.clients.size >= MAX_TRACKED) this.clients.clear();
    this.clients.set(caller.clientHash, client);
    this.global = this.count(this.global, now);
    const shared = await sharedCounts(deps, caller.clientHash, operatorId, now);
    client.count = Math.max(client.count, shared.client);

    if (client.count === 1)
      log.warn({ client: caller.clientHash.slice(0, 12) }, 'operator key: failed attempt (further failures from this client are summarized each minute)');
    else if (client.count === this.settings.perClientPerMinute + 1)
      log.warn({ client: caller.clientHash.slice(0, 12), failures: client.count }, 'operator key: client over the failed-attempt limit; throttling');
    const globalOver = this.global.count > this.settings.globalPerMinute;
    if (globalOver && this.globalWarned !== this.global.start) {
      this.globalWarned = this.global.start;
      log.warn({ failures: this.global.count }, 'operator key: failed attempts over the global limit; throttling every failure');
    }

    const retryAfter = Math.max(1, Math.ceil((Math.max(client.start, this.global.start) + WINDOW_MS - now) / 1000));
    const limited = new AppError(
      'rate_limited',
      `Too many failed attempts with the operator key. Retry after ${retryAfter} seconds.`,
      { limit: 'admin_key_failures_per_minute', retry_after_seconds: retryAfter },
      { 'Retry-After': String(retryAfter), 'RateLimit-Policy': this.policy },
    );
    // Every failure counts toward auto-block, as a limit refusal does.
    await noteRefusal(deps, caller, limited);
    let blocked: AppError | undefined;
    try {
      const kind = await matchBlock(deps, { clientHash: caller.clientHash });
      if (kind) blocked = clientBlocked(kind);
    } catch {
      // The store is down: the throttle still answers from memory.
    }
    const limit = this.settings.perClientPerMinute;
    const audit: FailureAudit = client.count <= limit ? 'each' : client.count === limit + 1 ? 'throttled' : 'counted';
    const window = minuteOf(now);
    const over = client.count > limit || shared.operator > limit || globalOver;
    if (!over && !blocked) return { error: unauthorized, audit, window };
    if (this.settings.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.settings.delayMs));
    return { error: blocked ?? limited, audit, window };
  }

  private count(window: Window | undefined, now: number): Window {
    if (!window || now - window.start >= WINDOW_MS) return { start: now, count: 1 };
    return { start: window.start, count: window.count + 1 };
  }
}

function minuteOf(now: number): string {
  return iso(new Date(now - (now % WINDOW_MS)));
}

/** The store's counts of this window (the minute of `now`), for the client and the operator named. */
async function sharedCounts(deps: AbuseDeps, clientHash: string, operatorId: string | undefined, now: number): Promise<{ client: number; operator: number }> {
  const window = minuteOf(now);
  try {
    const client = await countFailure(deps.store.db, `client:${clientHash}`, window);
    const operator = operatorId ? await countFailure(deps.store.db, `operator:${operatorId}`, window) : 0;
    return { client, operator };
  } catch {
    // The store is down: the in-memory count answers alone.
    return { client: 0, operator: 0 };
  }
}
