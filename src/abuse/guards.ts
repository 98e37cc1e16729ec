import type { Db } from '../store/db.js';
import type { MessageInput, TaskInput } from '../domain/schemas.js';
import type { Caller, ServiceDeps } from '../services/deps.js';

/**
 * Abuse control: the guards every submission and message passes, in this order —
 * screen (blocklist, e-mail deliverability) → idempotent replay → duplicate → quota (inside the
 * write transaction). Foundation stubs; issue "Abuse control without accounts" fills them in.
 */

export interface Screening {
  /** The resolver could not answer: accepted, but flagged for the operator. */
  emailUnverified: boolean;
}

/** A stored response replayed for a repeated Idempotency-Key. */
export interface StoredResponse {
  statusCode: number;
  location: string | null;
  body: unknown;
}

export async function screenTask(_deps: ServiceDeps, _caller: Caller, _input: TaskInput): Promise<Screening> {
  return { emailUnverified: false };
}

export async function screenMessage(_deps: ServiceDeps, _caller: Caller, _input: MessageInput): Promise<Screening> {
  return { emailUnverified: false };
}

/** Returns the stored response for this client's key and payload, or null; 422 for another payload. */
export async function findReplay(_deps: ServiceDeps, _caller: Caller, _requestHash: string): Promise<StoredResponse | null> {
  return null;
}

/** Throws 409 duplicate_task when the same client or contact e-mail sent the same task within the window. */
export async function assertNotDuplicate(_db: Db, _deps: ServiceDeps, _caller: Caller, _input: TaskInput, _dedupeKey: string): Promise<void> {}

/** Inside the write transaction: uses one unit of every quota or throws 429. Returns RateLimit-* headers. */
export async function consumeTaskQuota(_db: Db, _deps: ServiceDeps, _caller: Caller, _input: TaskInput): Promise<Record<string, string>> {
  return {};
}

export async function consumeMessageQuota(_db: Db, _deps: ServiceDeps, _caller: Caller): Promise<Record<string, string>> {
  return {};
}

/** Inside the write transaction: remembers the response for Idempotency-Key replays. */
export async function saveReplay(_db: Db, _deps: ServiceDeps, _caller: Caller, _requestHash: string, _response: StoredResponse): Promise<void> {}
