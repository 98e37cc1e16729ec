/**
 * A withdrawal is a rejection with one reason (contract "A2A 1.0", "Agent control and
 * development"): the requester's cancellation withdraws a task nobody accepted with
 * WITHDRAWN_REASON, and the operator's one-action withdrawal rejects with the same words (the
 * console writes them with a typographic apostrophe). A2A reports such a rejection as
 * TASK_STATE_CANCELED and MCP as `cancelled`; any other rejection stays a rejection.
 */

export const WITHDRAWN_REASON = "Withdrawn at the requester's request.";

/** Whether a task's status and notes say it was withdrawn at the requester's request. */
export function isWithdrawal(task: { status: string; operator_notes: string | null }): boolean {
  return task.status === 'rejected' && task.operator_notes !== null && task.operator_notes.replace('\u2019', "'") === WITHDRAWN_REASON;
}
