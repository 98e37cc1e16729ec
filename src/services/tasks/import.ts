import { canonicalJson, sha256Hex } from '../../domain/canonical.js';
import { AppError } from '../../domain/errors.js';
import { newContextId } from '../../domain/ids.js';
import { dueOf } from '../../domain/tasks/due.js';
import { IMPORT_MAX_RECORDS, type ImportRecord, type ImportResult, importRecordSchema } from '../../domain/tasks/import-schemas.js';
import type { TaskInput } from '../../domain/tasks/schemas.js';
import { isTestTask } from '../../domain/tasks/test-task.js';
import type { Actor } from '../../domain/team/actor.js';
import { parseDateTime } from '../../domain/time.js';
import { withTransaction } from '../../store/db.js';
import { insertImportedId } from '../../store/tasks/imported-ids-repo.js';
import { insertTask, type TaskRow, taskExists } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';
import { recordAudit } from '../team/audit.js';
import { dedupeKey } from './tasks.js';
import { schemaChecker } from './validation.js';

/**
 * The admin import (contract "Test tasks and imported history"): task records from another
 * deployment, kept exactly as given. Each record is validated on its own and stored in its own
 * transaction, so one bad record never half-imports and never stops the others; an id already
 * stored is skipped, so importing a file twice is harmless. Nothing is mailed or sent to a
 * webhook: these tasks happened elsewhere. Their later transitions here behave as usual.
 */

/** Marks the rows the import wrote: no client submitted them here. */
export const IMPORTED_CLIENT = 'imported';

const STAMP_RULE = 'must be an ISO 8601 UTC timestamp with milliseconds and Z, e.g. 2025-02-01T09:00:00.000Z';
const MESSAGES: Record<string, string> = {
  task_id: 'task_id must look like <prefix>-<year>-<hex>, e.g. task-2025-<32 lowercase hex digits> or HFAI-2026-<16 lowercase hex digits>',
  status_history: `status_history must be a list of 1 to 20 {status, at} entries: status one of the six, at ${STAMP_RULE}`,
  ...Object.fromEntries(['created_at', 'updated_at', 'seen_by_operator_at', 'eta', 'receipt_issued_at'].map((f) => [f, `${f} ${STAMP_RULE}`])),
  receipt: 'receipt must be a compact JWS (three base64url parts joined by dots)',
  deliverable_sha256: 'deliverable_sha256 must be 64 lowercase hex digits',
  request_sha256: 'request_sha256 must be 64 lowercase hex digits',
};

export async function importTasks(deps: ServiceDeps, actor: Actor, raw: unknown): Promise<ImportResult> {
  const records = recordsOf(raw);
  const check = schemaChecker<ImportRecord>(importRecordSchema(deps.config.limits), { unknown: 'ignore', nullIsAbsent: false, messages: MESSAGES });
  const result: ImportResult = { imported: 0, skipped: 0, errors: [] };
  for (const [index, record] of records.entries()) {
    if (!isObject(record)) {
      result.errors.push({ index, details: ['the record must be a JSON object'] });
      continue;
    }
    const { value, fieldErrors } = check(record);
    const details = fieldErrors.length > 0 ? fieldErrors : recordProblems(value);
    if (details.length > 0) {
      result.errors.push({ index, details });
      continue;
    }
    try {
      if (await storeRecord(deps, actor, importedRow(value, deps.profile.response_target_hours))) result.imported++;
      else result.skipped++;
    } catch (error) {
      // One record the store refuses (a race on its id, an outage) is reported, not a 500 for all.
      deps.log.error({ err: error, index }, 'import: record not stored');
      result.errors.push({ index, details: ['the record could not be stored; nothing of it was kept; try again'] });
    }
  }
  deps.log.info({ imported: result.imported, skipped: result.skipped, errors: result.errors.length }, 'tasks imported');
  return result;
}

/** One record, in its own transaction with its audit entry (who imported it); false when its id is already stored. */
async function storeRecord(deps: ServiceDeps, actor: Actor, row: TaskRow): Promise<boolean> {
  return withTransaction(deps.store.db, async (trx) => {
    if (await taskExists(trx, row.id)) return false;
    await insertTask(trx, row);
    // So a message naming it, in any case, is linked to it (lookups of the task itself stay exact).
    await insertImportedId(trx, row.id);
    await recordAudit(trx, deps, { actor, action: 'task.imported', taskId: row.id, details: { status: row.status } });
    await deps.changes.publish({ kind: 'task', taskId: row.id }, trx);
    return true;
  });
}

function recordsOf(raw: unknown): unknown[] {
  if (!isObject(raw) || !Array.isArray(raw.tasks)) {
    throw new AppError('malformed_request', 'The request body must be a JSON object with a "tasks" array.', {
      details: ['tasks must be an array of task records'],
    });
  }
  if (raw.tasks.length > IMPORT_MAX_RECORDS) {
    throw new AppError(
      'payload_too_large',
      `At most ${IMPORT_MAX_RECORDS} task records per call; this one has ${raw.tasks.length}. Split the file (npm run import does).`,
    );
  }
  return raw.tasks;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What the schema cannot say: history order and shape, timestamps, receipt only when delivered. */
export function recordProblems(record: ImportRecord): string[] {
  const problems: string[] = [];
  const history = record.status_history;
  const first = history[0];
  if (first && (first.status !== 'submitted' || first.at !== record.created_at)) problems.push('status_history must start with submitted at created_at');
  for (let i = 1; i < history.length; i++) {
    const [before, entry] = [history[i - 1], history[i]];
    if (before && entry && entry.at < before.at) problems.push(`status_history is out of order: entry ${i} (${entry.status}) is earlier than entry ${i - 1}`);
    if (entry?.status === 'submitted') problems.push(`status_history: submitted can only be the first entry (entry ${i})`);
    if (before && (before.status === 'delivered' || before.status === 'rejected'))
      problems.push(`status_history: nothing can follow ${before.status} (entry ${i})`);
  }
  if (history.at(-1)?.status !== record.status) problems.push(`status_history must end with the task's status (${record.status})`);
  const stamps: [string, string | null | undefined][] = [
    ['created_at', record.created_at],
    ['updated_at', record.updated_at],
    ['seen_by_operator_at', record.seen_by_operator_at],
    ['eta', record.eta],
    ['receipt_issued_at', record.receipt_issued_at],
    ...history.map((h, i): [string, string] => [`status_history[${i}].at`, h.at]),
  ];
  for (const [field, value] of stamps) {
    if (typeof value === 'string' && parseDateTime(value)?.toISOString() !== value) problems.push(`${field} is not a real date-time`);
  }
  if (record.updated_at !== undefined && record.updated_at < record.created_at) problems.push('updated_at must not be earlier than created_at');
  if (record.seen_by_operator_at != null && record.seen_by_operator_at < record.created_at)
    problems.push('seen_by_operator_at must not be earlier than created_at');
  const receiptFields = [record.receipt, record.deliverable_sha256, record.receipt_issued_at].filter((v) => v !== undefined).length;
  if (receiptFields > 0 && record.status !== 'delivered')
    problems.push(`receipt, deliverable_sha256 and receipt_issued_at belong to delivered tasks only; this one is ${record.status}`);
  else if (receiptFields > 0 && receiptFields < 3) problems.push('receipt, deliverable_sha256 and receipt_issued_at go together: give all three or none');
  if (record.description.trim() === '') problems.push('description must not be blank');
  return problems;
}

/** The stored row of a valid record: every given field as given, the rest derived as at submission. */
function importedRow(record: ImportRecord, targetHours: number): TaskRow {
  const request: TaskInput = { task_type: record.task_type, description: record.description };
  for (const key of ['location_required', 'location_detail', 'deadline', 'output_format', 'budget_usd', 'delivery', 'requester'] as const) {
    if (record[key] !== undefined) Object.assign(request, { [key]: record[key] });
  }
  const requestJson = canonicalJson(request);
  const history = record.status_history;
  const lastAt = (status: string): string | null => [...history].reverse().find((h) => h.status === status)?.at ?? null;
  return {
    id: record.task_id,
    status: record.status,
    task_type: record.task_type,
    description: record.description,
    dedupe_key: dedupeKey(record),
    location_required: record.location_required ? 1 : 0,
    location_detail: record.location_detail ?? null,
    deadline: record.deadline ?? null,
    output_format: record.output_format ?? 'text_report',
    budget_usd: record.budget_usd ?? null,
    requester: record.requester ?? '',
    source: record.source ?? 'api',
    // Without a contact e-mail there is nowhere to mail: the task behaves as status_poll.
    delivery: record.contact_email === undefined ? 'status_poll' : (record.delivery ?? 'email'),
    contact_email: record.contact_email ?? null,
    email_unverified: 0,
    client_hash: IMPORTED_CLIENT,
    created_at: record.created_at,
    updated_at: record.updated_at ?? history.at(-1)?.at ?? record.created_at,
    status_history: JSON.stringify(history.map((h) => ({ status: h.status, at: h.at }))),
    operator_notes: record.operator_notes ?? null,
    seen_by_operator_at: record.seen_by_operator_at ?? null,
    eta: record.eta ?? null,
    accepted_at: lastAt('accepted'),
    delivered_at: lastAt('delivered'),
    rejected_at: lastAt('rejected'),
    receipt: record.receipt ?? null,
    deliverable_sha256: record.deliverable_sha256 ?? null,
    receipt_issued_at: record.receipt_issued_at ?? null,
    request_sha256: record.request_sha256 ?? sha256Hex(requestJson),
    request_json: requestJson,
    callback_url: null,
    // Files stay with the deployment that holds them: an import carries the record, not the files.
    attachments: null,
    erased_at: null,
    is_test: isTestTask(record) ? 1 : 0,
    response_schema: null,
    questions: null,
    // An imported task reads back exactly as given: the deadline sweep leaves it alone.
    deadline_at: null,
    deadline_passed_at: null,
    due_at: dueOf({ created_at: record.created_at, deadline: record.deadline ?? null }, targetHours).at.toISOString(),
    agent_key_id: null,
    agent_directory: null,
    receipt_log_index: null,
    context_id: newContextId(new Date(record.created_at)),
    approvals_required: 1,
    approvals_given: 0,
    approval_round: 0,
    proposal: null,
    approval_returned: null,
  };
}
