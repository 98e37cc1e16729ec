import type { Limits } from '../config.js';
import { AppError } from '../domain/errors.js';
import { nextUtcMidnight, utcDay } from '../domain/time.js';

/**
 * Windows, policies and the RateLimit-* headers (draft-ietf-httpapi-ratelimit-headers-06, the
 * four-field form). Hour windows are fixed clock hours (10:00–10:59 UTC), minute windows fixed
 * clock minutes, day windows UTC days that reset at 00:00 UTC: each window is part of its counter
 * key, so every instance computes the same key for the same moment.
 */

export type WindowKind = 'minute' | 'hour' | 'day';

export interface Window {
  /** Part of the counter key: `2030-03-10T10:07`, `2030-03-10T10`, `2030-03-10`. */
  id: string;
  /** When the window ends. */
  resetsAt: Date;
  /** Window length for `w=` in RateLimit-Policy. */
  seconds: number;
}

/**
 * The last window of each kind worked out, with its start: a submission asks for its windows
 * several times (its counters, their expiry, its headers), and so do the others of its batch.
 * Shared, so never changed by a caller.
 */
const lastWindows = new Map<WindowKind, { start: number; window: Window }>();

export function windowOf(kind: WindowKind, now: Date): Window {
  const at = now.getTime();
  const last = lastWindows.get(kind);
  if (last && at >= last.start && at < last.window.resetsAt.getTime()) return last.window;
  let start: number;
  let window: Window;
  if (kind === 'day') {
    start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    window = { id: utcDay(now), resetsAt: nextUtcMidnight(now), seconds: 86_400 };
  } else {
    const step = kind === 'hour' ? 3_600_000 : 60_000;
    start = Math.floor(at / step) * step;
    window = { id: new Date(start).toISOString().slice(0, kind === 'hour' ? 13 : 16), resetsAt: new Date(start + step), seconds: step / 1000 };
  }
  lastWindows.set(kind, { start, window });
  return window;
}

/** Whole seconds until `at`, at least 1 (a Retry-After of 0 invites an immediate retry). */
export function secondsUntil(at: Date, now: Date): number {
  return Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000));
}

/** One quota a request is counted against. */
export interface Quota {
  /** The name a 429 reports in `limit`, e.g. `tasks_per_hour`. */
  name: string;
  window: WindowKind;
  limit: number;
  /** Counter key prefix; the client hash and window id are appended. */
  prefix: string;
  /** What a refusal says is limited, when not the quota set's own noun (`tasks with delivery status_poll`). */
  noun?: string;
  /** An address quota's counterpart in the verified tier (what a signed retry would be allowed). */
  verifiedLimit?: number;
}

export interface QuotaSet {
  /** Quotas of the RateLimit-Policy header, in the order counted. */
  quotas: Quota[];
  /** Precomputed `RateLimit-Policy` value; each item names its tier (`comment="address"` or `"verified"`). */
  policy: string;
  tier: Tier;
}

/** Who a policy counts: an address, or a verified agent's key (docs/verified-agents.md). */
export type Tier = 'address' | 'verified';

/**
 * RFC 9421 §5.1: what an unsigned client's 429 invites, a signed retry as Web Bot Auth signs it.
 * The contract fixes the value.
 */
export const ACCEPT_SIGNATURE = 'sig1=("@authority" "signature-agent");tag="web-bot-auth";alg="ed25519"';

/** One RateLimit-Policy item: `limit;w=seconds;comment="tier"`. */
export function policyItem(limit: number, seconds: number, tier: Tier): string {
  return `${limit};w=${seconds};comment="${tier}"`;
}

function quotaSet(quotas: Quota[], tier: Tier): QuotaSet {
  return {
    quotas,
    policy: quotas.map((q) => policyItem(q.limit, q.window === 'day' ? 86_400 : q.window === 'hour' ? 3_600 : 60, tier)).join(', '),
    tier,
  };
}

/**
 * What an unsigned client's 429 invites (contract "Verified agents"): `Accept-Signature` only where
 * the verified tier would have room, i.e. its limit for the refused quota is above the client's use
 * (a read limit the tiers share, or a verified limit set lower, invites nothing).
 */
export function invitation(set: QuotaSet, quota: Quota, used: number): Record<string, string> {
  return set.tier === 'address' && quota.verifiedLimit !== undefined && used < quota.verifiedLimit ? { 'Accept-Signature': ACCEPT_SIGNATURE } : {};
}

export interface Policies {
  task: QuotaSet;
  message: QuotaSet;
  read: QuotaSet;
  /** `status_poll` deliveries: counted on top of the task quotas. */
  statusPoll: Quota;
  /** E-mail domain look-ups a client causes (cache misses of the MX check), taken before each. */
  emailLookup: Quota;
}

/** The policies of a tier: an address's limits, or a verified agent's (VERIFIED_*). */
export function policiesFor(limits: Limits, tier: Tier = 'address'): Policies {
  const own = tier === 'verified' ? limits.verified : limits;
  // The verified counterpart of an address quota (undefined in the verified tier: nothing to invite).
  const v = (verified: number) => (tier === 'address' ? { verifiedLimit: verified } : {});
  return {
    task: quotaSet(
      [
        { name: 'tasks_per_hour', window: 'hour', limit: own.tasksPerHour, prefix: 'tasks:h', ...v(limits.verified.tasksPerHour) },
        { name: 'tasks_per_day', window: 'day', limit: own.tasksPerDay, prefix: 'tasks:d', ...v(limits.verified.tasksPerDay) },
      ],
      tier,
    ),
    message: quotaSet(
      [
        { name: 'messages_per_hour', window: 'hour', limit: own.messagesPerHour, prefix: 'messages:h', ...v(limits.verified.messagesPerHour) },
        { name: 'messages_per_day', window: 'day', limit: own.messagesPerDay, prefix: 'messages:d', ...v(limits.verified.messagesPerDay) },
      ],
      tier,
    ),
    read: quotaSet([{ name: 'reads_per_minute', window: 'minute', limit: limits.readsPerMinute, prefix: 'reads:m', ...v(limits.readsPerMinute) }], tier),
    statusPoll: {
      name: 'status_poll_per_day',
      window: 'day',
      limit: own.statusPollPerDay,
      prefix: 'poll:d',
      noun: 'tasks with delivery status_poll',
      ...v(limits.verified.statusPollPerDay),
    },
    emailLookup: { name: 'email_lookups_per_minute', window: 'minute', limit: limits.emailLookupsPerMinute, prefix: 'dns:m', noun: 'e-mail domain look-ups' },
  };
}

/** The quotas a task submission uses: the task quotas, and the status_poll quota for that delivery. */
export function taskQuotas(policies: Policies, delivery: string | undefined): Quota[] {
  return delivery === 'status_poll' ? [...policies.task.quotas, policies.statusPoll] : policies.task.quotas;
}

export function counterKey(quota: Quota, clientHash: string, window: Window): string {
  return `${quota.prefix}:${clientHash}:${window.id}`;
}

const expiries = new WeakMap<Window, string>();

/** Counters are kept one hour past their window, then swept. */
export function counterExpiry(window: Window): string {
  let expiry = expiries.get(window);
  if (expiry === undefined) {
    expiry = new Date(window.resetsAt.getTime() + 3_600_000).toISOString();
    expiries.set(window, expiry);
  }
  return expiry;
}

/** Where a client stands in one quota after a request. */
export interface Standing {
  limit: number;
  used: number;
  resetsAt: Date;
}

/** RateLimit-Limit/Remaining/Reset of the quota closest to running out (ties: the later reset). */
export function rateLimitHeaders(standings: Standing[], now: Date): Record<string, string> {
  let tightest: Standing | undefined;
  for (const s of standings) {
    const remaining = Math.max(0, s.limit - s.used);
    const best = tightest ? Math.max(0, tightest.limit - tightest.used) : Infinity;
    if (!tightest || remaining < best || (remaining === best && s.resetsAt > tightest.resetsAt)) tightest = s;
  }
  if (!tightest) return {};
  return {
    'RateLimit-Limit': String(tightest.limit),
    'RateLimit-Remaining': String(Math.max(0, tightest.limit - tightest.used)),
    'RateLimit-Reset': String(secondsUntil(tightest.resetsAt, now)),
  };
}

/** `RateLimit-Policy` and the tightest quota's standing for a client, given each counter's use. */
export function quotaHeaders(set: QuotaSet, clientHash: string, now: Date, used: (key: string) => number): Record<string, string> {
  const standings = set.quotas.map((quota) => {
    const window = windowOf(quota.window, now);
    return { limit: quota.limit, used: used(counterKey(quota, clientHash, window)), resetsAt: window.resetsAt };
  });
  return { 'RateLimit-Policy': set.policy, ...rateLimitHeaders(standings, now) };
}

/** 429 `rate_limited` naming the quota, with Retry-After until its window resets; `used`: the client's use of it. */
export function rateLimited(quota: Quota, window: Window, now: Date, set: QuotaSet, what: string, used = quota.limit): AppError {
  const retry = secondsUntil(window.resetsAt, now);
  // "1 task with delivery status_poll", "3 tasks": the noun agrees with the number.
  const plural = quota.noun ?? what;
  const noun = quota.limit === 1 ? plural.replace(/^(\w+?)s\b/, '$1') : plural;
  return new AppError(
    'rate_limited',
    `Limit reached: ${quota.limit} ${noun} per ${quota.window === 'day' ? 'day (UTC)' : quota.window} per client. Retry after ${retry} seconds.`,
    { limit: quota.name, retry_after_seconds: retry },
    {
      'Retry-After': String(retry),
      'RateLimit-Policy': set.policy,
      'RateLimit-Limit': String(quota.limit),
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': String(retry),
      ...invitation(set, quota, used),
    },
  );
}

/** 429 `capacity_reached`: the service-wide daily cap is used up until 00:00 UTC. */
export function capacityReached(now: Date, policy: string): AppError {
  const retry = secondsUntil(nextUtcMidnight(now), now);
  return new AppError(
    'capacity_reached',
    `The free pilot has reached today's capacity for new tasks. It resets at 00:00 UTC, in ${retry} seconds.`,
    { retry_after_seconds: retry },
    { 'Retry-After': String(retry), 'RateLimit-Policy': policy },
  );
}
