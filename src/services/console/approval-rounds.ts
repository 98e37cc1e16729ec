import { sha256Hex } from '../../domain/canonical.js';
import { AppError } from '../../domain/errors.js';
import type { Proposal, SentBack } from '../../domain/tasks/admin-schemas.js';
import { type Actor, actorName } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import { approvalChallenge } from '../../receipts/approval-challenge.js';
import { deliverableSha256, type ReceiptApproval } from '../../receipts/payload.js';
import type { Db } from '../../store/db.js';
import { type ApprovalRow, approvalsOf, assertionUsed, insertApproval } from '../../store/tasks/approvals-repo.js';
import type { TaskRow } from '../../store/tasks/tasks-repo.js';
import type { ServiceDeps } from '../context.js';
import { verifyApprovalAssertion } from '../team/passkeys.js';

/**
 * The parts of a proposal round that a delivery (transitions.ts) and a decision (approvals.ts) share
 * (docs/approvals.md): what is stored of a proposal, the challenge a passkey signs, and one
 * approval written with its signature.
 */

/** A proposal as `tasks.proposal` keeps it (JSON). */
export interface StoredProposal {
  round: number;
  by: string;
  at: string;
  operator_notes: string;
  deliverable_sha256: string;
  /** base64url of the approval challenge over this deliverable. */
  challenge: string;
  approvals: { approver: string; at: string; signed: boolean }[];
}

export function storedProposal(row: Pick<TaskRow, 'proposal'>): StoredProposal | null {
  return row.proposal === null ? null : (JSON.parse(row.proposal) as StoredProposal);
}

const replayed = () =>
  new AppError('invalid_signature', 'The passkey signature is not accepted: this assertion was counted already (a replay). Sign again.', {
    details: ['assertion: this assertion was counted already (a replay)'],
  });

export const approvalNotAllowed = (why: string) => new AppError('approval_not_allowed', why);

/** The challenge a passkey signs to approve `deliverable` of this task, base64url. */
export function challengeFor(task: Pick<TaskRow, 'id' | 'request_sha256'>, deliverable: string): string {
  const bytes = approvalChallenge({ task_id: task.id, request_sha256: task.request_sha256, deliverable_sha256: deliverable });
  return Buffer.from(bytes).toString('base64url');
}

/**
 * Writes one approval of the round, signed when an assertion comes with it: verified against the
 * actor's own passkeys over this proposal's challenge, and counted once (an assertion seen before,
 * on any task, is a replay). The primary key refuses the same approver twice on every instance.
 */
export async function writeApproval(
  trx: Db,
  deps: ServiceDeps,
  actor: Actor,
  task: Pick<TaskRow, 'id'>,
  proposal: Pick<StoredProposal, 'round' | 'challenge'>,
  assertion: unknown,
  now: Date,
): Promise<ApprovalRow> {
  // A replay is named as such before anything else is checked (the signature counter would refuse
  // it too, but not every passkey keeps one).
  const claimed = (assertion as { response?: { signature?: unknown } } | undefined)?.response?.signature;
  if (typeof claimed === 'string' && claimed.length <= 4096 && (await assertionUsed(trx, sha256Hex(Buffer.from(claimed, 'base64url'))))) throw replayed();
  const signature =
    assertion === undefined
      ? null
      : await verifyApprovalAssertion(
          trx,
          deps,
          actor.kind === 'operator' ? actor.operatorId : null,
          new Uint8Array(Buffer.from(proposal.challenge, 'base64url')),
          assertion,
        );
  if (signature && (await assertionUsed(trx, signature.assertionSha256))) throw replayed();
  const row: ApprovalRow = {
    task_id: task.id,
    round: proposal.round,
    approver: actorName(actor),
    at: iso(now),
    key_id: signature?.keyId ?? null,
    attestation: signature ? JSON.stringify(signature.attestation) : null,
    assertion_sha256: signature?.assertionSha256 ?? null,
  };
  await insertApproval(trx, row);
  return row;
}

/**
 * What a delivery of a task needing more than one approval changes instead (contract "Decisions by
 * more than one person"): the task stays accepted, the planned deliverable becomes the proposal of
 * a new round, and the proposer's approval is its first.
 */
export async function proposalChanges(
  trx: Db,
  deps: ServiceDeps,
  actor: Actor,
  current: TaskRow,
  planned: Partial<TaskRow>,
  assertion: unknown,
  now: Date,
): Promise<Partial<TaskRow>> {
  const notes = planned.operator_notes ?? '';
  const deliverable = deliverableSha256(notes);
  const round = current.approval_round + 1;
  const challenge = challengeFor(current, deliverable);
  const first = await writeApproval(trx, deps, actor, current, { round, challenge }, assertion, now);
  const proposal: StoredProposal = {
    round,
    by: actorName(actor),
    at: iso(now),
    operator_notes: notes,
    deliverable_sha256: deliverable,
    challenge,
    approvals: [{ approver: first.approver, at: first.at, signed: first.attestation !== null }],
  };
  const { status: _s, status_history: _h, delivered_at: _d, receipt_issued_at: _r, operator_notes: _n, ...kept } = planned;
  return { ...kept, proposal: JSON.stringify(proposal), approval_round: round, approvals_given: 1, approval_returned: null };
}

/**
 * The approvals a receipt lists (receipt_version 3), in the order given: `order` names the approvers
 * as the proposal recorded them (timestamps of one millisecond would not tell them apart).
 */
export async function receiptApprovals(trx: Db, taskId: string, round: number, order: string[]): Promise<ReceiptApproval[]> {
  const rank = (row: ApprovalRow) => {
    const at = order.indexOf(row.approver);
    return at === -1 ? order.length : at;
  };
  const rows = (await approvalsOf(trx, taskId, round)).sort((a, b) => rank(a) - rank(b));
  return rows.map((row) => ({
    key_id: row.key_id,
    at: row.at,
    attestation: row.attestation === null ? null : (JSON.parse(row.attestation) as ReceiptApproval['attestation']),
  }));
}

/** The operator's view of the approvals of a task needing more than one; nothing for the others. */
export function approvalView(row: TaskRow): { proposal?: Proposal | null; sent_back?: SentBack | null } {
  if (row.approvals_required <= 1) return {};
  const stored = storedProposal(row);
  return {
    proposal: stored && {
      proposed_by: stored.by,
      proposed_at: stored.at,
      operator_notes: stored.operator_notes,
      deliverable_sha256: stored.deliverable_sha256,
      challenge: stored.challenge,
      approvals: stored.approvals,
    },
    sent_back: row.approval_returned === null ? null : (JSON.parse(row.approval_returned) as SentBack),
  };
}
