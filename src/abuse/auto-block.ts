import { AppError } from '../domain/errors.js';
import { deleteCounters, incrementCounter, readCounters } from '../store/abuse-control/counters-repo.js';
import { blockClient } from './blocklist.js';
import type { AbuseDeps, Caller } from './context.js';
import { windowOf } from './limits.js';

/**
 * Auto-block: a client refused with 429 `rate_limited` on submissions or messages
 * AUTO_BLOCK_REFUSALS times within 24 hours is blocked for AUTO_BLOCK_HOURS (a blocklist row with
 * source `auto` and an expiry). Refusals are counted in clock-hour buckets and summed over the last
 * 24, a rolling day. Limit refusals count, and so do e-mail addresses on domains that do not
 * exist (each cost a DNS look-up, and a flood of them relays a random-subdomain attack); any other
 * 422 or a 409 is an agent fixing its request or retrying, not hammering; a 429
 * `capacity_reached` is the service's limit, not the client's.
 */

const HOUR_MS = 3_600_000;

function refusalKey(clientHash: string, hourId: string): string {
  return `refusals:${clientHash}:${hourId}`;
}

/** Called after a refused submission's transaction has rolled back, so the count survives it. */
export async function noteRefusal(deps: AbuseDeps, caller: Caller, error: unknown): Promise<void> {
  if (error instanceof AppError && error.code === 'rate_limited') await countRefusal(deps, caller);
}

/** Counts one refusal toward auto-block, and blocks the client when it reaches the limit. */
export async function countRefusal(deps: AbuseDeps, caller: Caller): Promise<void> {
  try {
    const now = deps.clock.now();
    const db = deps.store.db;
    const keys = Array.from({ length: 24 }, (_, i) => refusalKey(caller.clientHash, windowOf('hour', new Date(now.getTime() - i * HOUR_MS)).id));
    await incrementCounter(db, keys[0]!, new Date(now.getTime() + 25 * HOUR_MS).toISOString());
    const counts = await readCounters(db, keys);
    let refusals = 0;
    for (const count of counts.values()) refusals += count;
    const { autoBlockRefusals, autoBlockHours } = deps.config.limits;
    if (refusals < autoBlockRefusals) return;
    await blockClient(deps, caller, `auto: ${refusals} rate-limit refusals within 24 hours`, new Date(now.getTime() + autoBlockHours * HOUR_MS));
    // A fresh start once the block ends: the refusals that caused it are spent.
    await deleteCounters(db, keys);
  } catch (failure) {
    deps.log.error({ err: failure }, 'could not record a refusal');
  }
}
