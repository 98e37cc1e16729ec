import { randomBytes } from 'node:crypto';

/** Bytes drawn from the CSPRNG at a time (see randomHex). */
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomAt = 0;

/**
 * `bytes` random bytes as lowercase hex, for ids. A call to randomBytes costs ~10 µs on the event
 * loop whatever its size (one task id a submission was 1.7 % of the loop in the default-path
 * flood); the bytes are drawn 4 KiB at a time and each is used once, as Node's own randomUUID
 * batches them. Secrets (keys, session ids) still take randomBytes directly.
 */
export function randomHex(bytes: number): string {
  if (randomAt + bytes > randomPool.length) {
    randomPool = randomBytes(Math.max(RANDOM_POOL_BYTES, bytes));
    randomAt = 0;
  }
  const hex = randomPool.toString('hex', randomAt, randomAt + bytes);
  randomAt += bytes;
  return hex;
}

/** `task-<UTC year>-<32 lowercase hex>`: 128 random bits, so the id can act as the access token. */
export function newTaskId(now: Date): string {
  return `task-${now.getUTCFullYear()}-${randomHex(16)}`;
}

/** `ctx-<UTC year>-<32 lowercase hex>`: an A2A contextId the service issues with a task (docs/a2a.md). */
export function newContextId(now: Date): string {
  return `ctx-${now.getUTCFullYear()}-${randomHex(16)}`;
}

/** What a contextId can look like: the issued form, or one derived from an imported task's id (migration 300). */
export const CONTEXT_ID_PATTERN = /^ctx-[A-Za-z0-9-]{8,100}$/;

export function newMessageId(now: Date): string {
  return `msg-${now.getUTCFullYear()}-${randomHex(16)}`;
}

/** `evt-<UTC year>-<32 lowercase hex>`: a webhook event's id (the webhook-id header). */
export function newEventId(now: Date): string {
  return `evt-${now.getUTCFullYear()}-${randomHex(16)}`;
}

export const EVENT_ID_PATTERN = /^evt-\d{4}-[0-9a-f]{32}$/;

export const TASK_ID_PATTERN = /^task-\d{4}-[0-9a-f]{32}$/;

/**
 * Any task id this service may hold: its own, or one imported from another deployment
 * (`<prefix>-<year>-<hex>`, docs/import.md; the prefix in any case, as the reference deployment's
 * `HFAI-2026-<16 hex>`, docs/import.md#other-deployments-ids-issue-29). Lookups accept these, exactly as stored; new tasks always get
 * TASK_ID_PATTERN.
 */
export const ANY_TASK_ID_PATTERN = /^[A-Za-z][A-Za-z0-9]{0,31}-\d{4}-[0-9a-f]{8,64}$/;

/** Something in a message's text that may name a task, in any case. */
const MENTION = /\b[A-Za-z][A-Za-z0-9]{0,31}-\d{4}-[0-9a-fA-F]{8,64}\b/g;
/** At most this many names of each kind are linked per message. */
const MAX_MENTIONS = 20;

/**
 * The task ids a message names, in any case (for withdrawals and questions about a task): `own`
 * are the service's own ids (lower case, as stored); `folded` the other names, case-folded, which
 * link to a task only if an imported id folds to the same (imported-ids-repo.ts).
 */
export function taskIdMentions(text: string): { own: string[]; folded: string[] } {
  const own = new Set<string>();
  const folded = new Set<string>();
  for (const [mention] of text.matchAll(MENTION)) {
    const lower = mention.toLowerCase();
    if (TASK_ID_PATTERN.test(lower)) own.add(lower);
    else folded.add(lower);
  }
  return { own: [...own].slice(0, MAX_MENTIONS), folded: [...folded].slice(0, MAX_MENTIONS) };
}

/** An Idempotency-Key (header or MCP argument): 1 to 255 visible ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7e]{1,255}$';
const IDEMPOTENCY_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && IDEMPOTENCY_KEY.test(value);
}
