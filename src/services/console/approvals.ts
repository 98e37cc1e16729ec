import { AppError, validationFailed } from '../../domain/errors.js';
import { type AdminTask, type ApprovalDecision, ApprovalDecisionSchema } from '../../domain/tasks/admin-schemas.js';
import { type Actor, actorName } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import * as outbox from '../../mail/outbox.js';
import { deliverableSha256 } from '../../receipts/payload.js';
import { type Db, withTransaction } from '../../store/db.js';
import { hasApproved } from '../../store/tasks/approvals-repo.js';
import { findTask, lockTask, proposedTasks, type TaskRow, updateTaskIfStatus } from '../../store/tasks/tasks-repo.js';
import { assigneeOf } from '../../store/team/assignments-repo.js';
import { enabledOperator, listOperatorRows } from '../../store/team/operators-repo.js';
import type { ServiceDeps } from '../context.js';
import { enqueueTaskEvent } from '../delivery/webhooks.js';
import { schemaChecker } from '../tasks/validation.js';
import { recordAudit } from '../team/audit.js';
import { approvalNotAllowed, challengeFor, receiptApprovals, type StoredProposal, storedProposal, writeApproval } from './approval-rounds.js';
import { toAdminTask } from './reads.js';
import { approvalAudit, planPatch, withReceipt } from './transitions.js';

/**
 * Decisions by more than one person (contract section of that name, docs/approvals.md): other
 * operators approve a proposed deliverable or send it back; at the quorum it is delivered through
 * the delivery of transitions.ts (the same receipt, mail and webhook), with receipt_version 3.
 * One function for the admin API and the console.
 *
 * Races: each decision takes the task's row lock (PostgreSQL; SQLite transactions are serialized)
 * and writes through a conditional update on the status, the proposal round and its count, so two
 * approvals, an approval and a send-back, or an approval and a rejection resolve one way: a loser
 * is refused whole, and nothing is delivered below the quorum.
 */

const checkDecision = schemaChecker<ApprovalDecision>(ApprovalDecisionSchema, {
  unknown: 'refuse',
  messages: { decision: 'decision must be "approve" or "send_back"' },
  notAnObject: 'body must be a JSON object: {decision: "approve" | "send_back", reason?, assertion?}',
});

function parseDecision(raw: unknown): ApprovalDecision {
  const { value, fieldErrors } = checkDecision(raw);
  if (fieldErrors.length === 0 && value.decision === undefined) fieldErrors.push('decision is required: "approve" or "send_back"');
  if (fieldErrors.length === 0 && value.decision === 'send_back') {
    if (value.reason === undefined || value.reason.trim() === '') fieldErrors.push('reason is required to send a proposal back: the proposer reads it');
    if (value.assertion !== undefined) fieldErrors.push('assertion signs an approval; a send-back is not signed');
  }
  if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
  return value;
}

export interface DecisionOptions {
  /** The console session was opened with a passkey: its approvals must be signed by it. */
  passkeySession?: boolean;
}

/** POST /api/v1/admin/tasks/{task_id}/approvals and the console's "Approve" and "Send back". */
export async function decideApproval(deps: ServiceDeps, actor: Actor, taskId: string, raw: unknown, options: DecisionOptions = {}): Promise<AdminTask> {
  const decision = parseDecision(raw);
  if (options.passkeySession && decision.decision === 'approve' && decision.assertion === undefined) {
    throw validationFailed(['assertion is required: you signed in with a passkey, so your approval is signed by it (the console asks your device)']);
  }
  const now = deps.clock.now();
  const decided = await withTransaction(deps.store.db, async (trx) => {
    // A delivery freezes the files: the row lock also keeps uploads out (as transitions.ts).
    await lockTask(trx, deps.store.dialect, taskId);
    const current = await findTask(trx, taskId);
    if (!current) throw new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}".`);
    const proposal = storedProposal(current);
    if (current.status !== 'accepted' || proposal === null) {
      throw approvalNotAllowed(
        current.approvals_required <= 1
          ? 'This task needs no approvals: it is delivered by one operator.'
          : `Nothing is proposed on this task (it is ${current.status}): approvals are given to a proposed deliverable.`,
      );
    }
    // Sessions and keys of a disabled operator end at once; this closes the last gap (disabled mid-request).
    if (actor.kind === 'operator' && !(await enabledOperator(trx, actor.operatorId))) {
      throw new AppError('forbidden', 'This operator is disabled: their decisions no longer count.');
    }
    const next =
      decision.decision === 'send_back'
        ? await sendBack(trx, deps, actor, current, decision.reason ?? '', now)
        : await approve(trx, deps, actor, current, proposal, decision.assertion, now);
    await deps.changes.publish({ kind: 'task', taskId }, trx);
    return { task: next, assignee: await assigneeOf(trx, taskId) };
  });
  deps.log.info({ task_id: taskId, decision: decision.decision, given: decided.task.approvals_given, status: decided.task.status }, 'approval decision');
  return toAdminTask(decided.task, decided.assignee);
}

function raced(): AppError {
  return new AppError('invalid_transition', 'The task changed while this decision was being handled (another approval?). Reload it and try again.', {
    from: 'accepted',
    to: 'accepted',
  });
}

async function sendBack(trx: Db, deps: ServiceDeps, actor: Actor, current: TaskRow, reason: string, now: Date): Promise<TaskRow> {
  const at = iso(now);
  const changes: Partial<TaskRow> = {
    proposal: null,
    approvals_given: 0,
    approval_returned: JSON.stringify({ by: actorName(actor), at, reason }),
    updated_at: at,
  };
  if (!(await updateTaskIfStatus(trx, current.id, 'accepted', changes, current))) throw raced();
  const next = { ...current, ...changes };
  await recordAudit(trx, deps, { actor, action: 'approval.returned', taskId: current.id, details: { round: current.approval_round, reason } });
  await enqueueTaskEvent(trx, deps, next, 'task.approval', `${current.approval_round}/returned`);
  return next;
}

async function approve(trx: Db, deps: ServiceDeps, actor: Actor, current: TaskRow, proposal: StoredProposal, assertion: unknown, now: Date): Promise<TaskRow> {
  const me = actorName(actor);
  if (await hasApproved(trx, current.id, proposal.round, me)) {
    throw approvalNotAllowed(
      me === proposal.by
        ? 'You proposed this deliverable: your approval counts already; another operator must approve it.'
        : 'You approved this proposal already; another operator must approve it.',
    );
  }
  const approval = await writeApproval(trx, deps, actor, current, proposal, assertion, now);
  const given = current.approvals_given + 1;
  const recorded: StoredProposal = {
    ...proposal,
    approvals: [...proposal.approvals, { approver: me, at: approval.at, signed: approval.attestation !== null }],
  };
  if (given < current.approvals_required) {
    const changes: Partial<TaskRow> = { approvals_given: given, proposal: JSON.stringify(recorded), updated_at: iso(now) };
    if (!(await updateTaskIfStatus(trx, current.id, 'accepted', changes, current))) throw raced();
    const next = { ...current, ...changes };
    await recordAudit(trx, deps, approvalAudit(actor, next, 'approved'));
    await enqueueTaskEvent(trx, deps, next, 'task.approval', `${proposal.round}/${given}`);
    return next;
  }
  // The quorum: delivered as a PATCH would deliver it, with the approvals in the receipt.
  const structured = current.response_schema !== null;
  const planned = planPatch(
    current,
    structured ? { status: 'delivered', result: JSON.parse(proposal.operator_notes) } : { status: 'delivered', operator_notes: proposal.operator_notes },
    now,
  );
  const changes: Partial<TaskRow> = { ...planned, approvals_given: given, proposal: null };
  const next = await withReceipt(
    trx,
    deps,
    { ...current, ...changes },
    now,
    await receiptApprovals(
      trx,
      current.id,
      proposal.round,
      recorded.approvals.map((a) => a.approver),
    ),
  );
  const written = await updateTaskIfStatus(
    trx,
    current.id,
    'accepted',
    {
      ...changes,
      receipt: next.receipt,
      deliverable_sha256: next.deliverable_sha256,
      attachments: next.attachments,
      receipt_issued_at: next.receipt_issued_at,
    },
    current,
  );
  if (!written) throw raced();
  await recordAudit(trx, deps, approvalAudit(actor, next, 'approved'));
  await recordAudit(trx, deps, {
    actor,
    action: 'task.delivered',
    taskId: current.id,
    details: { from: 'accepted', to: 'delivered', deliverable_sha256: next.deliverable_sha256, proposed_by: proposal.by },
  });
  await enqueueTaskEvent(trx, deps, next, 'task.approval', `${proposal.round}/${given}`);
  await outbox.enqueueTaskTransition(trx, deps, next);
  await enqueueTaskEvent(trx, deps, next);
  return next;
}

/**
 * The challenge a passkey signs to propose `notes` as the deliverable of this task, or null when a
 * delivery of it proposes nothing (one approval, or not accepted): the console's signing step.
 */
export async function proposalChallenge(deps: ServiceDeps, taskId: string, notes: string): Promise<string | null> {
  const current = await findTask(deps.store.db, taskId);
  if (!current || current.approvals_required <= 1 || current.status !== 'accepted') return null;
  return challengeFor(current, deliverableSha256(notes));
}

export interface WaitingApproval {
  task: AdminTask;
  /** The signed-in operator may approve it (not the proposer, not approved already). */
  mine: boolean;
}

/** The console's "Approve" view: what waits for approvals, and whether the team is large enough for each. */
export async function waitingApprovals(deps: ServiceDeps, actor: Actor): Promise<{ waiting: WaitingApproval[]; operators: number }> {
  const db = deps.store.db;
  const [rows, operators] = await Promise.all([proposedTasks(db, 100), listOperatorRows(db)]);
  const me = actorName(actor);
  const waiting = rows.map((row) => {
    const task = toAdminTask(row, null);
    const approvers = task.proposal?.approvals.map((a) => a.approver) ?? [];
    return { task, mine: !approvers.includes(me) };
  });
  return { waiting, operators: operators.filter((o) => o.disabled === 0).length };
}
