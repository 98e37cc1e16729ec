import { randomBytes } from 'node:crypto';

/** `task-<UTC year>-<32 lowercase hex>`: 128 random bits, so the id can act as the access token. */
export function newTaskId(now: Date): string {
  return `task-${now.getUTCFullYear()}-${randomBytes(16).toString('hex')}`;
}

export function newMessageId(now: Date): string {
  return `msg-${now.getUTCFullYear()}-${randomBytes(16).toString('hex')}`;
}

export const TASK_ID_PATTERN = /^task-\d{4}-[0-9a-f]{32}$/;

/** Finds the task ids a message mentions (for withdrawals and questions about a task). */
export function taskIdsIn(text: string): string[] {
  return [...new Set(text.match(/task-\d{4}-[0-9a-f]{32}/g) ?? [])];
}
