import { resultProblems } from '../../domain/answers/response-validator.js';
import { canonicalJson } from '../../domain/canonical.js';
import { AppError, validationFailed } from '../../domain/errors.js';
import { attachmentUrl } from '../../domain/network/urls.js';
import { type AdminTask, type TaskPatch, TaskPatchSchema } from '../../domain/tasks/admin-schemas.js';
import type { PublicAttachment } from '../../domain/tasks/schemas.js';
import { canTransition, isFinal, type StatusEntry, type TaskStatus } from '../../domain/tasks/task.js';
import type { Actor } from '../../domain/team/actor.js';
import { iso, parseDateTime } from '../../domain/time.js';
import * as outbox from '../../mail/outbox.js';
import { type ReceiptApproval, receiptPayload } from '../../receipts/payload.js';
import { signReceipt } from '../../receipts/sign.js';
import { listAttachments } from '../../store/attachments/attachments-repo.js';
import { type Db, withTransaction } from '../../store/db.js';
import { findTask, lockTask, statusHistory, type TaskRow, updateTaskIfStatus } from '../../store/tasks/tasks-repo.js';
import { assigneeOf, setAssignment } from '../../store/team/assignments-repo.js';
import { enabledOperator } from '../../store/team/operators-repo.js';
import type { ServiceDeps } from '../context.js';
import { enqueueTaskEvent } from '../delivery/webhooks.js';
import { appendReceiptLeaf } from '../receipt-log/receipt-log.js';
import { DATE_TIME_RULE, schemaChecker } from '../tasks/validation.js';
import { type AuditRecord, recordAudit } from '../team/audit.js';
import { proposalChanges } from './approval-rounds.js';
import { toAdminTask } from './reads.js';

/**
 * The operator's PATCH: status transitions (service-spec "States and transitions") and edits of
 * `eta` and `operator_notes`. One function for the admin API and the console.
 */

const checkPatch = schemaChecker<TaskPatch>(TaskPatchSchema, {
  // Strict here, unlike submissions: a typo in an operator's field would silently do nothing.
  unknown: 'refuse',
  // operator_notes: null clears the notes (a rejection without a reason).
  nullIsAbsent: false,
  messages: {
    status: 'status must be one of: submitted, accepted, delivered, rejected',
    eta: `eta ${DATE_TIME_RULE}`,
    assignee: 'assignee must be an operator_id (a string) or null',
  },
  notAnObject: 'body must be a JSON object: {status?, eta?, operator_notes?, result?}',
});

/** Field errors, all at once, each naming its field (422); a non-object body is 400. */
export function parsePatch(raw: unknown): TaskPatch {
  const { value: patch, fieldErrors } = checkPatch(raw);
  // The schema's date-time format is not the service's date parser: both must accept it.
  if (typeof patch.eta === 'string' && parseDateTime(patch.eta) === null && !fieldErrors.some((e) => e.startsWith('eta ')))
    fieldErrors.push(`eta ${DATE_TIME_RULE}`);
  if (
    fieldErrors.length === 0 &&
    patch.status === undefined &&
    patch.eta === undefined &&
    patch.operator_notes === undefined &&
    patch.result === undefined &&
    patch.assignee === undefined &&
    patch.assertion === undefined
  ) {
    fieldErrors.push('send at least one of status, eta, operator_notes, result, assignee');
  }
  if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
  return patch;
}

/**
 * The deliverable of a task with a response schema: the canonical JSON of a valid `result`
 * (contract "Structured answers"). Undefined when the PATCH is not such a delivery; a result where
 * none belongs, notes where a result belongs, or an invalid result is 422 saying what to send.
 */
function structuredDelivery(current: TaskRow, patch: TaskPatch): string | undefined {
  const delivering = patch.status === 'delivered';
  if (current.response_schema === null) {
    if (patch.result !== undefined) {
      throw validationFailed(['result is only for tasks with a response_schema; this task has none: send operator_notes (the deliverable as text)']);
    }
    return undefined;
  }
  if (patch.result === undefined) {
    if (!delivering) return undefined;
    throw validationFailed([
      'result is required to deliver: this task has a response_schema, so send result (a JSON value valid against it) instead of operator_notes',
    ]);
  }
  if (!delivering) throw validationFailed(['result is sent with status "delivered" (it is the deliverable)']);
  if (patch.operator_notes !== undefined) {
    throw validationFailed(['operator_notes cannot be sent with result: the deliverable of a task with a response_schema is result alone']);
  }
  const problems = resultProblems(JSON.parse(current.response_schema), patch.result);
  if (problems.length > 0) throw validationFailed(problems, 'The result does not match the task’s response_schema; see details.');
  return canonicalJson(patch.result);
}

function invalidTransition(from: string, to: string, why: string): AppError {
  return new AppError('invalid_transition', why, { from, to });
}

/** What a PATCH changes on a task, decided from the current row alone (pure). */
export function planPatch(current: TaskRow, patch: TaskPatch, now: Date): Partial<TaskRow> {
  const from = current.status as TaskStatus;
  const to = patch.status;
  if (isFinal(from)) {
    throw invalidTransition(from, to ?? from, `The task is ${from}, which is final: its status, eta and operator_notes can no longer change.`);
  }
  if (to !== undefined && !canTransition(from, to)) {
    const allowed = from === 'accepted' ? 'delivered or rejected' : 'accepted or rejected';
    const article = /^[aeiou]/.test(from) ? 'An' : 'A';
    throw invalidTransition(from, to, `${article} ${from} task can move to ${allowed} only; ${to} is not allowed from ${from}.`);
  }
  const at = iso(now);
  const changes: Partial<TaskRow> = { updated_at: at };
  // Any change by the operator implies they have seen the task.
  if (current.seen_by_operator_at === null) changes.seen_by_operator_at = at;

  if (patch.eta !== undefined) {
    const target = to ?? from;
    if (target !== 'accepted') throw validationFailed(['eta can only be set when accepting the task or while it is accepted']);
    const eta = parseDateTime(patch.eta);
    if (!eta || eta.getTime() <= now.getTime()) throw validationFailed(['eta must be in the future']);
    changes.eta = iso(eta);
  }
  if (patch.operator_notes !== undefined) changes.operator_notes = patch.operator_notes;

  const structured = structuredDelivery(current, patch);
  if (structured !== undefined) changes.operator_notes = structured;

  if (to !== undefined) {
    changes.status = to;
    changes.status_history = JSON.stringify([...statusHistory(current), { status: to, at } satisfies StatusEntry]);
    if (to === 'accepted') changes.accepted_at = at;
    if (to === 'rejected') changes.rejected_at = at;
    if (to === 'delivered') {
      const notes = structured ?? (patch.operator_notes !== undefined ? patch.operator_notes : current.operator_notes);
      if (notes === null || notes.trim() === '') {
        throw validationFailed(['operator_notes is required to deliver: it is the deliverable (or, for e-mail delivery, a summary of what was sent)']);
      }
      changes.operator_notes = notes;
      changes.delivered_at = at;
      changes.receipt_issued_at = at;
    }
  }
  return changes;
}

/**
 * Applies a PATCH in one transaction: the conditional update (WHERE status = from) makes two
 * racing operators unable to both move the task; the receipt is signed and the requester's mail
 * queued in the same transaction as the change. `inTransaction`: the caller's transaction to run
 * in instead of one of its own (a held action commits with the deletion of its hold).
 */
export async function patchTask(deps: ServiceDeps, actor: Actor, taskId: string, raw: unknown, inTransaction?: Db): Promise<AdminTask> {
  const patch = parsePatch(raw);
  const now = deps.clock.now();
  const updated = await withTransaction(inTransaction ?? deps.store.db, async (trx) => {
    // A delivery freezes the files: no upload may slip in between reading them and the update. A
    // rejection waits for a racing approval (docs/approvals.md) instead of failing on its guard.
    if (patch.status === 'delivered' || patch.status === 'rejected') await lockTask(trx, deps.store.dialect, taskId);
    const current = await findTask(trx, taskId);
    if (!current) throw new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}".`);
    const planned = planPatch(current, patch, now);
    // A task needing more than one approval: its delivery proposes the deliverable (docs/approvals.md).
    const proposing = planned.status === 'delivered' && current.approvals_required > 1;
    if (patch.assertion !== undefined && !proposing) {
      throw validationFailed(['assertion signs a proposal: send it with status "delivered" on a task that needs more than one approval']);
    }
    let changes = proposing ? await proposalChanges(trx, deps, actor, current, planned, patch.assertion, now) : planned;
    // A rejection ends a proposal waiting for approvals: none can count after it.
    if (planned.status === 'rejected' && current.proposal !== null) changes = { ...changes, proposal: null, approvals_given: 0 };
    const assignee = await assign(trx, deps, actor, taskId, patch, now);
    let next: TaskRow = { ...current, ...changes };
    if (next.status === 'delivered' && current.status !== 'delivered') {
      next = await withReceipt(trx, deps, next, now);
    }
    const changed = await updateTaskIfStatus(
      trx,
      taskId,
      current.status,
      { ...changes, receipt: next.receipt, deliverable_sha256: next.deliverable_sha256, attachments: next.attachments },
      // A proposal or a rejection also needs the approvals as they were read: a racing approval wins or loses whole.
      proposing || changes.proposal !== undefined ? current : undefined,
    );
    if (!changed) {
      const latest = await findTask(trx, taskId);
      throw invalidTransition(
        latest?.status ?? current.status,
        patch.status ?? current.status,
        'The task changed while this request was being handled (another operator?). Reload it and try again.',
      );
    }
    if (next.status !== current.status) {
      await outbox.enqueueTaskTransition(trx, deps, next);
      await enqueueTaskEvent(trx, deps, next);
    }
    if (proposing) {
      await recordAudit(trx, deps, approvalAudit(actor, next, 'proposed'));
      await enqueueTaskEvent(trx, deps, next, 'task.approval', `${next.approval_round}/1`);
    } else if (patch.status !== undefined || patch.eta !== undefined || patch.operator_notes !== undefined) {
      // An assignment alone is recorded by assign() as task.assigned, not as an edit.
      await recordAudit(trx, deps, patchAudit(actor, taskId, patch, current, next));
    }
    await deps.changes.publish({ kind: 'task', taskId }, trx);
    return { task: next, assignee };
  });
  if (patch.status !== undefined) deps.log.info({ task_id: taskId, status: updated.task.status }, 'task transition');
  return toAdminTask(updated.task, updated.assignee);
}

/** The task's files as the public task lists them from now on, frozen with absolute URLs. */
async function deliveredFiles(trx: Db, deps: ServiceDeps, taskId: string): Promise<PublicAttachment[]> {
  const rows = await listAttachments(trx, taskId);
  return rows.map((row) => ({
    attachment_id: row.id,
    name: row.name,
    media_type: row.media_type,
    size: row.size,
    sha256: row.sha256,
    url: attachmentUrl(deps.config.baseUrl, taskId, row.id),
  }));
}

/**
 * Signs the receipt of a task being delivered, its leaf appended in the same transaction: version 2,
 * or 3 with `approvals` for a task that needed more than one (services/console/approvals.ts).
 */
export async function withReceipt(trx: Db, deps: ServiceDeps, task: TaskRow, now: Date, approvals?: ReceiptApproval[]): Promise<TaskRow> {
  const files = await deliveredFiles(trx, deps, task.id);
  const payload = receiptPayload(
    deps.config.baseUrl,
    {
      id: task.id,
      task_type: task.task_type,
      delivery: task.delivery,
      operator_notes: task.operator_notes ?? '',
      request_sha256: task.request_sha256,
      created_at: task.created_at,
      seen_by_operator_at: task.seen_by_operator_at,
      accepted_at: task.accepted_at,
      delivered_at: task.delivered_at ?? iso(now),
      attachments: files,
      ...(approvals === undefined ? {} : { approvals }),
    },
    now,
  );
  const receipt = await signReceipt(trx, payload, now);
  // The receipt's leaf in the public log, in the transaction that issues it (the sequencer places it).
  await appendReceiptLeaf(trx, task.id, receipt, now);
  return { ...task, receipt, deliverable_sha256: payload.deliverable_sha256, receipt_issued_at: iso(now), attachments: JSON.stringify(files) };
}

/**
 * Applies `assignee` of a PATCH (an enabled operator's id, or null) in the PATCH's transaction, with
 * its task.assigned entry; returns who the task is assigned to afterwards.
 */
async function assign(trx: Db, deps: ServiceDeps, actor: Actor, taskId: string, patch: TaskPatch, now: Date): Promise<string | null> {
  if (patch.assignee === undefined) return assigneeOf(trx, taskId);
  if (patch.assignee !== null && !(await enabledOperator(trx, patch.assignee))) {
    throw validationFailed(['assignee must be the operator_id of an enabled operator, or null']);
  }
  await setAssignment(trx, taskId, patch.assignee, iso(now));
  await recordAudit(trx, deps, { actor, action: 'task.assigned', taskId, details: { assignee: patch.assignee } });
  return patch.assignee;
}

/** The audit entry `approval.given` of a proposal or an approval: where the round stands after it. */
export function approvalAudit(actor: Actor, next: TaskRow, kind: 'proposed' | 'approved'): AuditRecord {
  return {
    actor,
    action: 'approval.given',
    taskId: next.id,
    details: { kind, round: next.approval_round, given: next.approvals_given, required: next.approvals_required },
  };
}

/** The audit entry of a PATCH: the transition (task.accepted, …), or task.updated naming the fields edited. */
function patchAudit(actor: Actor, taskId: string, patch: TaskPatch, current: TaskRow, next: TaskRow): AuditRecord {
  if (next.status !== current.status) {
    const details = {
      from: current.status,
      to: next.status,
      ...(next.eta ? { eta: next.eta } : {}),
      ...(next.deliverable_sha256 ? { deliverable_sha256: next.deliverable_sha256 } : {}),
    };
    return { actor, action: `task.${next.status}`, taskId, details };
  }
  return { actor, action: 'task.updated', taskId, details: { fields: Object.keys(patch).sort() } };
}

/**
 * Checks a PATCH against the task as it is now without changing anything: the console's
 * confirmation step refuses (409, 422) exactly as the real change would.
 */
export async function checkPatchNow(deps: ServiceDeps, taskId: string, raw: unknown): Promise<TaskRow> {
  const patch = parsePatch(raw);
  const current = await findTask(deps.store.db, taskId);
  if (!current) throw new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}".`);
  planPatch(current, patch, deps.clock.now());
  return current;
}
