import { validationFailed } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import type { Db } from '../store/db.js';
import { findIdempotencyRecord, saveIdempotencyRecord } from '../store/idempotency-repo.js';
import type { AbuseDeps, Caller } from './context.js';

/**
 * Idempotency-Key, scoped to the client (the key is stored with the client hash, so a key never
 * reaches another client's task): the same key and payload within IDEMPOTENCY_WINDOW_HOURS replay
 * the original status, Location and body; another payload is 422. Both run inside the submission
 * transaction, under the key's lock on PostgreSQL (guards.lockSubmission), so twins racing on two
 * instances cannot both create a task.
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

export async function findStoredResponse(db: Db, deps: AbuseDeps, caller: Caller, requestHash: string): Promise<StoredResponse | null> {
  if (caller.idempotencyKey === undefined) return null;
  const row = await findIdempotencyRecord(db, caller.clientHash, caller.idempotencyKey, iso(deps.clock.now()));
  if (!row) return null;
  if (row.request_hash !== requestHash) throw reusedKey();
  return { statusCode: Number(row.status_code), location: row.location, body: JSON.parse(row.body) as unknown };
}

/** Remembers a response; an expired record of the same key is overwritten. */
export async function storeResponse(db: Db, deps: AbuseDeps, caller: Caller, requestHash: string, response: StoredResponse): Promise<void> {
  if (caller.idempotencyKey === undefined) return;
  const now = deps.clock.now();
  const body = response.body as { task_id?: unknown } | null;
  const record = {
    request_hash: requestHash,
    status_code: response.statusCode,
    location: response.location,
    body: JSON.stringify(response.body),
    task_id: typeof body?.task_id === 'string' ? body.task_id : null,
    created_at: iso(now),
    expires_at: iso(new Date(now.getTime() + deps.config.limits.idempotencyWindowHours * 3_600_000)),
  };
  // A live record appeared since findStoredResponse: only possible without the key's lock; refuse.
  if (!(await saveIdempotencyRecord(db, caller.clientHash, caller.idempotencyKey, record))) throw reusedKey();
}
