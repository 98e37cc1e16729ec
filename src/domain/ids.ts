import { randomBytes } from 'node:crypto';

/** `task-<UTC year>-<32 lowercase hex>`: 128 random bits, so the id can act as the access token. */
export function newTaskId(now: Date): string {
  return `task-${now.getUTCFullYear()}-${randomBytes(16).toString('hex')}`;
}

export function newMessageId(now: Date): string {
  return `msg-${now.getUTCFullYear()}-${randomBytes(16).toString('hex')}`;
}

/** `evt-<UTC year>-<32 lowercase hex>`: a webhook event's id (the webhook-id header). */
export function newEventId(now: Date): string {
  return `evt-${now.getUTCFullYear()}-${randomBytes(16).toString('hex')}`;
}

export const EVENT_ID_PATTERN = /^evt-\d{4}-[0-9a-f]{32}$/;

export const TASK_ID_PATTERN = /^task-\d{4}-[0-9a-f]{32}$/;

/**
 * Any task id this service may hold: its own, or one imported from another deployment
 * (`<prefix>-<year>-<hex>`, issue 19). Lookups accept these; new tasks always get TASK_ID_PATTERN.
 */
export const ANY_TASK_ID_PATTERN = /^[a-z][a-z0-9]{0,31}-\d{4}-[0-9a-f]{8,64}$/;

/** Finds the task ids a message mentions (for withdrawals and questions about a task). */
export function taskIdsIn(text: string): string[] {
  return [...new Set(text.match(/task-\d{4}-[0-9a-f]{32}/g) ?? [])];
}

/** An Idempotency-Key (header or MCP argument): 1 to 255 visible ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7e]{1,255}$';
const IDEMPOTENCY_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && IDEMPOTENCY_KEY.test(value);
}
