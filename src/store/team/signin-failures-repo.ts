import { sql } from 'kysely';
import type { Db } from '../db.js';

/**
 * Failed sign-ins per key (a client address hash, an operator), in fixed windows, shared by every
 * instance: one atomic upsert per failure, so N instances do not allow N times the guesses.
 */

/** Counts one failure for `key` in the window that starts at `windowStart`; returns the window's count. */
export async function countFailure(db: Db, key: string, windowStart: string): Promise<number> {
  const row = await db
    .insertInto('signin_failures')
    .values({ key, window_start: windowStart, count: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        // A new window starts over; the same window counts on.
        count: sql<number>`case when signin_failures.window_start = ${windowStart} then signin_failures.count + 1 else 1 end`,
        window_start: windowStart,
      }),
    )
    .returning('count')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Forgets windows that ended before `before`. */
export async function sweepFailures(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('signin_failures').where('window_start', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
