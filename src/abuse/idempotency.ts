import { validationFailed } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { findIdempotencyRecord, type IdempotencyRow } from '../store/abuse-control/idempotency-repo.js';
import type { Db } from '../store/db.js';
import type { AbuseDeps, Caller } from './context.js';

/**
 * Idempotency-Key, scoped to the client (the key is stored with the client hash, so a key never
 * reaches another client's task): the same key and payload within IDEMPOTENCY_WINDOW_HOURS replay
 * the original status, Location and body; another payload is 422. Both are decided inside the
 * submission transaction, under the key's lock on PostgreSQL (submission-guards.ts), so twins
 * racing on two instances cannot both create a task.
 */

export interface StoredResponse {
  statusCode: number;
  location: string | null;
  body: unknown;
}

function reusedKey() {
  return validationFailed(
    ['Idempotency-Key was already used with a different payload; send a new key for a new request'],
    'This Idempotency-Key belongs to another request; see details.',
  );
}

/** The stored response a record replays; 422 when the record belongs to another payload. */
export function replayOf(record: Pick<IdempotencyRow, 'request_hash' | 'status_code' | 'location' | 'body'>, requestHash: string): StoredResponse {
  if (record.request_hash !== requestHash) throw reusedKey();
  return { statusCode: Number(record.status_code), location: record.location, body: JSON.parse(record.body) as unknown };
}

/** Replays this client's key, or null when it has no live record; 422 for another payload. */
export async function findStoredResponse(db: Db, deps: AbuseDeps, caller: Caller, requestHash: string): Promise<StoredResponse | null> {
  if (caller.idempotencyKey === undefined) return null;
  const row = await findIdempotencyRecord(db, caller.clientHash, caller.idempotencyKey, iso(deps.clock.now()));
  return row ? replayOf(row, requestHash) : null;
}

/** The record that remembers a response under the caller's key for IDEMPOTENCY_WINDOW_HOURS. */
export function idempotencyRecord(deps: AbuseDeps, clientHash: string, key: string, requestHash: string, response: StoredResponse, now: Date): IdempotencyRow {
  const body = response.body as { task_id?: unknown } | null;
  return {
    client_hash: clientHash,
    key,
    request_hash: requestHash,
    status_code: response.statusCode,
    location: response.location,
    body: JSON.stringify(response.body),
    task_id: typeof body?.task_id === 'string' ? body.task_id : null,
    created_at: iso(now),
    expires_at: iso(new Date(now.getTime() + deps.config.limits.idempotencyWindowHours * 3_600_000)),
  };
}
