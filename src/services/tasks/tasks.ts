import * as guards from '../../abuse/guards.js';
import { canonicalJson, sha256Hex } from '../../domain/canonical.js';
import { AppError } from '../../domain/errors.js';
import { ANY_TASK_ID_PATTERN, newContextId, newTaskId } from '../../domain/ids.js';
import { statusPageUrl, statusUrl } from '../../domain/network/urls.js';
import { bodyGuardError } from '../../domain/tasks/body-guard.js';
import { dueOf } from '../../domain/tasks/due.js';
import type { DryRunResponse, PublicTask, SubmissionResponse, TaskInput } from '../../domain/tasks/schemas.js';
import { normalizeDescription } from '../../domain/tasks/task.js';
import { isTestTask } from '../../domain/tasks/test-task.js';
import { iso, parseDateTime } from '../../domain/time.js';
import * as outbox from '../../mail/outbox.js';
import { withTransaction } from '../../store/db.js';
import { cachedPublicTask, findPublicTask, insertTasks, type TaskRow } from '../../store/tasks/tasks-repo.js';
import type { Caller, ServiceDeps } from '../context.js';
import type { Outcome } from './group-commit.js';

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

/** A submission checked up to its transaction: what the commit (or a dry run's peek) decides on. */
type Checked =
  | { kind: 'replay'; replay: guards.StoredResponse }
  | { kind: 'checked'; input: TaskInput; warnings: string[]; screening: guards.Screening | undefined; requestHash: string; now: Date };

/**
 * Everything a submission checks before its transaction, for submitTask and dryRunTask alike: the
 * body guards, an Idempotency-Key replay, validation, then the screening (blocklist, quotas, the
 * daily cap, the e-mail's MX), which a dry run passes without taking or counting anything.
 */
async function check(deps: ServiceDeps, caller: Caller, raw: unknown, dryRun: boolean): Promise<Checked> {
  const now = deps.clock.now();
  // The body guards come first, whatever the door: the hash below cannot canonicalize ±Infinity.
  const unsafe = bodyGuardError(raw);
  if (unsafe) throw unsafe;
  // A repeated Idempotency-Key replays the original answer before anything else is checked: the
  // request was valid when it was first accepted, even if its deadline has passed since. The
  // payload is compared as sent (canonical JSON), so any change to it is "another payload". Only a
  // keyed submission is ever compared: without a key there is no hash to take.
  const requestHash = caller.idempotencyKey !== undefined && isJsonObject(raw) ? sha256Hex(canonicalJson(raw)) : '';
  if (requestHash !== '') {
    const early = await guards.findReplay(deps.store.db, deps, caller, requestHash);
    if (early) return { kind: 'replay', replay: early };
  }
  const { value: input, warnings } = deps.validators.task(raw, now);
  // Screening before the transaction is for the MX lookup, which cannot wait inside it (it takes
  // the quota units first); without an e-mail, the blocklist and the quotas are checked in the
  // transaction only.
  const screening = input.contact_email === undefined ? undefined : await guards.screenTask(deps, caller, input, input.contact_email, dryRun);
  return { kind: 'checked', input, warnings, screening, requestHash, now };
}

/**
 * Submits a task: validate → screen → (group commit: lock, blocklist, replay, quota, duplicate,
 * task, mail, idempotency record). The same function serves REST, MCP and the web form.
 */
export async function submitTask(deps: ServiceDeps, caller: Caller, raw: unknown): Promise<SubmitResult> {
  const checked = await check(deps, caller, raw, false);
  if (checked.kind === 'replay') return replayResult(checked.replay, await guards.taskQuotaHeaders(deps.store.db, deps, caller));
  const { input, warnings, screening, requestHash, now } = checked;
  const row = buildTaskRow(input, caller, { emailUnverified: screening?.emailUnverified ?? false }, now, deps.profile.response_target_hours);
  const body = buildSubmissionResponse(deps.config.baseUrl, row, warnings, deps.profile.response_target_hours);
  let verdict: guards.Verdict;
  try {
    verdict = await deps.submissions.submit(guarded(caller, input, row, requestHash, body, screening?.reservation?.counters));
  } catch (error) {
    // The transaction did not commit: the units the screening took are given back here.
    await screening?.reservation?.release();
    throw error;
  }
  switch (verdict.kind) {
    case 'refused':
      throw verdict.error;
    case 'duplicate':
      throw guards.duplicateRefusal(deps, verdict.duplicate);
    case 'replay':
      return replayResult(verdict.replay, verdict.headers);
    case 'admitted':
      deps.log.info({ task_id: row.id, task_type: row.task_type, source: row.source }, 'task submitted');
      // A unit taken before the look-up reports where the client stood when it was taken.
      return { statusCode: 202, location: body.status_url, body, headers: screening?.reservation?.headers ?? verdict.headers, replayed: false };
  }
}

/**
 * A dry run (contract "Know before you ask"): every check submitTask runs, through the same code,
 * answering what the submission would get — its error, or that it would be accepted with the
 * limits that apply — while creating nothing, sending nothing and using no quota: no lock, no
 * write, no refusal counted toward auto-block, and an Idempotency-Key is only looked up.
 */
export async function dryRunTask(deps: ServiceDeps, caller: Caller, raw: unknown): Promise<DryRunResponse> {
  const checked = await check(deps, caller, raw, true);
  let warnings: string[] = [];
  // The standing's counters are read with the checks' own (one statement).
  let known: Map<string, number> | undefined;
  if (checked.kind === 'checked') {
    const { input, screening, requestHash, now } = checked;
    warnings = checked.warnings;
    const row = buildTaskRow(input, caller, { emailUnverified: screening?.emailUnverified ?? false }, now, deps.profile.response_target_hours);
    const body = buildSubmissionResponse(deps.config.baseUrl, row, warnings, deps.profile.response_target_hours);
    const standingKeys = guards.taskQuotaStandingKeys(deps, caller);
    const { verdict, counts } = await guards.SubmissionGuards.peek(
      deps.store.db,
      deps,
      guarded(caller, input, row, requestHash, body, undefined),
      standingKeys,
    );
    // A duplicate's 409 only: the mail a real one sends to another client's address is not sent.
    if (verdict.kind === 'refused') throw verdict.error;
    if (verdict.kind === 'duplicate') throw guards.duplicateRefusal(deps, verdict.duplicate);
    known = counts;
  }
  const limits = await guards.taskQuotaStanding(deps.store.db, deps, caller, known);
  const answer: DryRunResponse = {
    dry_run: true,
    would_accept: true,
    limits: { tasks_per_hour: limits.tasks_per_hour!, tasks_per_day: limits.tasks_per_day!, status_poll_per_day: limits.status_poll_per_day! },
  };
  if (warnings.length > 0) answer.warnings = warnings;
  return answer;
}

function guarded(
  caller: Caller,
  input: TaskInput,
  row: TaskRow,
  requestHash: string,
  body: SubmissionResponse,
  reserved: readonly guards.ReservedUnit[] | undefined,
): Submission {
  return {
    caller,
    input,
    row,
    taskId: row.id,
    dedupeKey: row.dedupe_key,
    requestHash,
    response: { statusCode: 202, location: body.status_url, body },
    reserved,
  };
}

/** The stored task of a valid, screened submission. */
export function buildTaskRow(input: TaskInput, caller: Caller, screening: Pick<guards.Screening, 'emailUnverified'>, now: Date, targetHours: number): TaskRow {
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
    output_format: input.output_format ?? (input.response_schema === undefined ? 'text_report' : 'structured_json'),
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
    response_schema: input.response_schema === undefined ? null : JSON.stringify(input.response_schema),
    questions: null,
    deadline_at: deadlineInstant(input.deadline),
    deadline_passed_at: null,
    due_at: iso(dueOf({ created_at: at, deadline: input.deadline ?? null }, targetHours).at),
    agent_key_id: caller.agent?.keyId ?? null,
    agent_directory: caller.agent?.directory ?? null,
    receipt_log_index: null,
    context_id: caller.contextId ?? newContextId(now),
    approvals_required: input.approvals ?? 1,
    approvals_given: 0,
    approval_round: 0,
    proposal: null,
    approval_returned: null,
  };
}

/** The deadline as a UTC instant, for the deadline sweep (services/tasks/deadlines.ts). */
function deadlineInstant(deadline: string | undefined): string | null {
  const at = deadline === undefined ? null : parseDateTime(deadline);
  return at ? iso(at) : null;
}

/** The 202 body of an accepted submission; the review target is the operator profile's own. */
export function buildSubmissionResponse(baseUrl: string, row: TaskRow, warnings: string[], responseTargetHours: number): SubmissionResponse {
  const body: SubmissionResponse = {
    task_id: row.id,
    status: 'submitted',
    created_at: row.created_at,
    status_url: statusUrl(baseUrl, row.id),
    status_page: statusPageUrl(baseUrl, row.id),
    message:
      `Task received. A human operator reviews every task (target: within ${responseTargetHours === 1 ? '1 hour' : `${responseTargetHours} hours`}). ` +
      'Wait for changes without polling: GET status_url with If-None-Match (its ETag) and Prefer: wait=60 (over MCP: check_task_status with wait_seconds), ' +
      'or poll every few minutes at most; ' +
      (row.delivery === 'email'
        ? 'the result is also e-mailed to contact_email.'
        : row.response_schema !== null
          ? 'the result will appear in result (valid against your response_schema).'
          : 'the result will appear in operator_notes.') +
      (row.is_test === 1 ? ' Recognized as a test task (the word "test" in description or requester): the operator treats it as a test.' : ''),
  };
  if (warnings.length > 0) body.warnings = warnings;
  return body;
}

/** A validated, screened submission waiting for its group commit. */
export interface Submission extends guards.GuardedSubmission {
  row: TaskRow;
}

/**
 * The group commit of submissions (deps.submissions): one transaction for every submission that
 * arrived together. The guards decide each in turn as if it had come alone (submission-guards.ts);
 * the admitted ones' tasks, changes, mails, counters and Idempotency-Key records are written
 * together, and a duplicate found only by contact e-mail queues the id's mail to that address. A
 * refusal writes nothing; rate-limit refusals are counted (auto-block) after the commit.
 */
export async function commitSubmissions(deps: ServiceDeps, submissions: Submission[]): Promise<Outcome<guards.Verdict>[]> {
  deps.metrics.submissionBatch.observe(submissions.length);
  const verdicts = await withTransaction(deps.store.db, async (trx) => {
    const checks = await guards.SubmissionGuards.load(trx, deps, submissions);
    const decided = submissions.map((submission) => checks.decide(submission));
    const admitted = submissions.filter((_, i) => decided[i]?.kind === 'admitted').map((s) => s.row);
    await checks.save(trx);
    await insertTasks(trx, admitted);
    await deps.changes.publishAll(
      admitted.map((row) => ({ kind: 'task', taskId: row.id })),
      trx,
    );
    await outbox.enqueueTaskSubmitted(trx, deps, admitted);
    for (const verdict of decided) {
      // Another client matched only by contact e-mail: the id goes to that address (a 409 changes nothing else).
      if (verdict.kind === 'duplicate' && !verdict.duplicate.sameClient) await outbox.enqueueDuplicateNotice(trx, deps, verdict.duplicate);
    }
    return decided;
  });
  for (const [i, verdict] of verdicts.entries()) {
    const submission = submissions[i];
    if (verdict.kind === 'refused' && submission) await guards.noteRefusal(deps, submission.caller, verdict.error);
  }
  return verdicts.map((value) => ({ ok: true, value }));
}

function replayResult(replay: guards.StoredResponse, headers: Record<string, string>): SubmitResult {
  return { statusCode: replay.statusCode, location: replay.location ?? '', body: replay.body as SubmissionResponse, headers, replayed: true };
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** getTask's answer when the read cache already holds it (no query, no wait); otherwise undefined. */
export function cachedTask(deps: ServiceDeps, taskId: string): Readonly<PublicTask> | undefined {
  return ANY_TASK_ID_PATTERN.test(taskId) ? cachedPublicTask(deps.store, deps.taskCache, taskId) : undefined;
}

/** The task as anyone holding its id may read it. Shared and frozen: do not modify it. */
export async function getTask(deps: ServiceDeps, taskId: string): Promise<Readonly<PublicTask>> {
  // Only a well-formed id can name a task; anything else is answered without asking the store.
  const task = ANY_TASK_ID_PATTERN.test(taskId) ? await findPublicTask(deps.store, deps.taskCache, taskId) : undefined;
  if (!task) throw new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}". Check the task_id returned at submission.`);
  return task;
}
