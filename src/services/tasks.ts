import * as guards from '../abuse/guards.js';
import { bodyGuardError } from '../domain/body-guard.js';
import { canonicalJson, sha256Hex } from '../domain/canonical.js';
import { AppError } from '../domain/errors.js';
import { ANY_TASK_ID_PATTERN, newTaskId } from '../domain/ids.js';
import type { PublicTask, SubmissionResponse, TaskInput } from '../domain/schemas.js';
import { normalizeDescription } from '../domain/task.js';
import { isTestTask } from '../domain/test-task.js';
import { iso } from '../domain/time.js';
import { statusPageUrl, statusUrl } from '../domain/urls.js';
import * as outbox from '../mail/outbox.js';
import { withTransaction } from '../store/db.js';
import { findPublicTask, insertTask, type TaskRow } from '../store/tasks-repo.js';
import type { Caller, ServiceDeps } from './context.js';

export interface SubmitResult {
  statusCode: number;
  location: string;
  body: SubmissionResponse;
  /** RateLimit-* headers for the response. */
  headers: Record<string, string>;
  replayed: boolean;
}

/** The key duplicate detection compares: task type plus the normalized description. */
export function dedupeKey(input: Pick<TaskInput, 'task_type' | 'description'>): string {
  return sha256Hex(`${input.task_type}\n${normalizeDescription(input.description)}`);
}

/**
 * The request as submitted, less the contact e-mail and the callback URL: what a receipt's
 * request_sha256 covers. Both are private routing details, never published, and a receipt's
 * verifier (who may be anyone holding the task id) must be able to recompute the hash from
 * what the service publishes.
 */
export function requestForReceipt(input: TaskInput): string {
  const { contact_email: _omitted, callback_url: _private, ...rest } = input;
  return canonicalJson(rest);
}

/**
 * Submits a task: validate → screen → (transaction: lock, replay, duplicate, quota, task, mail,
 * idempotency record). The same function serves REST, MCP and the web form.
 */
export async function submitTask(deps: ServiceDeps, caller: Caller, raw: unknown): Promise<SubmitResult> {
  const now = deps.clock.now();
  // The body guards come first, whatever the door: the hash below cannot canonicalize ±Infinity.
  const unsafe = bodyGuardError(raw);
  if (unsafe) throw unsafe;
  // A repeated Idempotency-Key replays the original answer before anything else is checked: the
  // request was valid when it was first accepted, even if its deadline has passed since. The
  // payload is compared as sent (canonical JSON), so any change to it is "another payload".
  const requestHash = isJsonObject(raw) ? sha256Hex(canonicalJson(raw)) : '';
  if (requestHash !== '') {
    const early = await guards.findReplay(deps.store.db, deps, caller, requestHash);
    if (early) return replayResult(early, await guards.taskQuotaHeaders(deps.store.db, deps, caller));
  }
  const { value: input, warnings } = deps.validators.task(raw, now);
  const screening = await guards.screenTask(deps, caller, input);
  const row = buildTaskRow(input, caller, screening, now);
  const body = buildSubmissionResponse(deps.config.baseUrl, row, warnings);
  const outcome = await commitSubmission(deps, caller, { input, row, body, requestHash });
  if (outcome.duplicate) throw guards.duplicateRefusal(deps, outcome.duplicate);
  if (outcome.replay) return replayResult(outcome.replay, outcome.headers);
  deps.log.info({ task_id: row.id, task_type: row.task_type, source: row.source }, 'task submitted');
  return { statusCode: 202, location: body.status_url, body, headers: outcome.headers, replayed: false };
}

/** The stored task of a valid, screened submission. */
export function buildTaskRow(input: TaskInput, caller: Caller, screening: guards.Screening, now: Date): TaskRow {
  const at = iso(now);
  const requestJson = requestForReceipt(input);
  return {
    id: newTaskId(now),
    status: 'submitted',
    task_type: input.task_type,
    description: input.description,
    dedupe_key: dedupeKey(input),
    location_required: input.location_required ? 1 : 0,
    location_detail: input.location_detail ?? null,
    deadline: input.deadline ?? null,
    output_format: input.output_format ?? 'text_report',
    budget_usd: input.budget_usd ?? null,
    requester: input.requester ?? '',
    source: caller.source,
    delivery: input.delivery ?? 'email',
    contact_email: input.contact_email ?? null,
    email_unverified: screening.emailUnverified ? 1 : 0,
    client_hash: caller.clientHash,
    created_at: at,
    updated_at: at,
    status_history: JSON.stringify([{ status: 'submitted', at }]),
    operator_notes: null,
    seen_by_operator_at: null,
    eta: null,
    accepted_at: null,
    delivered_at: null,
    rejected_at: null,
    receipt: null,
    deliverable_sha256: null,
    receipt_issued_at: null,
    request_sha256: sha256Hex(requestJson),
    request_json: requestJson,
    attachments: null,
    callback_url: input.callback_url ?? null,
    erased_at: null,
    is_test: isTestTask(input) ? 1 : 0,
  };
}

/** The 202 body of an accepted submission. */
export function buildSubmissionResponse(baseUrl: string, row: TaskRow, warnings: string[]): SubmissionResponse {
  const body: SubmissionResponse = {
    task_id: row.id,
    status: 'submitted',
    created_at: row.created_at,
    status_url: statusUrl(baseUrl, row.id),
    status_page: statusPageUrl(baseUrl, row.id),
    message:
      'Task received. A human operator reviews every task (target: within 12 hours). ' +
      'Wait for changes without polling: GET status_url with If-None-Match (its ETag) and Prefer: wait=60 (over MCP: check_task_status with wait_seconds), ' +
      'or poll every few minutes at most; ' +
      (row.delivery === 'email' ? 'the result is also e-mailed to contact_email.' : 'the result will appear in operator_notes.') +
      (row.is_test === 1 ? ' Recognized as a test task (the word "test" in description or requester): the operator treats it as a test.' : ''),
  };
  if (warnings.length > 0) body.warnings = warnings;
  return body;
}

interface Submission {
  input: TaskInput;
  row: TaskRow;
  body: SubmissionResponse;
  requestHash: string;
}

/**
 * The submission's transaction. Replay, duplicate and quota are decided inside it, under the
 * submission's locks, so twin requests racing on several instances cannot both get through; the
 * task, its mail and its idempotency record commit together. A refusal is counted (auto-block)
 * after the rollback.
 */
async function commitSubmission(
  deps: ServiceDeps,
  caller: Caller,
  submission: Submission,
): Promise<{ headers: Record<string, string>; replay?: guards.StoredResponse; duplicate?: guards.Duplicate }> {
  const { input, row, body, requestHash } = submission;
  try {
    return await withTransaction(deps.store.db, async (trx) => {
      await guards.lockSubmission(trx, deps, caller, row.dedupe_key);
      const replay = await guards.findReplay(trx, deps, caller, requestHash);
      if (replay) return { replay, headers: await guards.taskQuotaHeaders(trx, deps, caller) };
      const duplicate = await guards.checkDuplicate(trx, deps, caller, input, row.dedupe_key);
      if (duplicate) {
        // Another client matched only by contact e-mail: the id goes to that address, by mail
        // queued in this transaction, which commits (a 409 changes nothing else).
        if (!duplicate.sameClient) await outbox.enqueueDuplicateNotice(trx, deps, duplicate);
        return { duplicate, headers: {} };
      }
      const quotaHeaders = await guards.consumeTaskQuota(trx, deps, caller, input);
      await insertTask(trx, row);
      await deps.changes.publish({ kind: 'task', taskId: row.id }, trx);
      await outbox.enqueueTaskSubmitted(trx, deps, row);
      await guards.saveReplay(trx, deps, caller, requestHash, { statusCode: 202, location: body.status_url, body });
      return { headers: quotaHeaders };
    });
  } catch (error) {
    await guards.noteRefusal(deps, caller, error);
    throw error;
  }
}

function replayResult(replay: guards.StoredResponse, headers: Record<string, string>): SubmitResult {
  return { statusCode: replay.statusCode, location: replay.location ?? '', body: replay.body as SubmissionResponse, headers, replayed: true };
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The task as anyone holding its id may read it. Shared and frozen: do not modify it. */
export async function getTask(deps: ServiceDeps, taskId: string): Promise<Readonly<PublicTask>> {
  // Only a well-formed id can name a task; anything else is answered without asking the store.
  const task = ANY_TASK_ID_PATTERN.test(taskId) ? await findPublicTask(deps.store, deps.taskCache, taskId) : undefined;
  if (!task) throw new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}". Check the task_id returned at submission.`);
  return task;
}
