import type { OutboxRow } from '../../src/store/outbox-repo.js';
import type { TaskRow } from '../../src/store/tasks-repo.js';

/** Rows written straight through the store layer, for tests of the repositories themselves. */

const AT = '2030-03-10T10:00:00.000Z';

/** A submitted task's row with every column set; `over` replaces any of them. */
export function taskRow(id: string, over: Partial<TaskRow> = {}): TaskRow {
  return {
    id,
    status: 'submitted',
    task_type: 'data_collection',
    description: `Task ${id}: count the benches.`,
    dedupe_key: `dedupe-${id}`,
    location_required: 0,
    location_detail: null,
    deadline: null,
    output_format: 'text_report',
    budget_usd: null,
    requester: 'store test',
    source: 'api',
    delivery: 'status_poll',
    contact_email: null,
    email_unverified: 0,
    client_hash: 'client-1',
    created_at: AT,
    updated_at: AT,
    status_history: JSON.stringify([{ status: 'submitted', at: AT }]),
    operator_notes: null,
    seen_by_operator_at: null,
    eta: null,
    accepted_at: null,
    delivered_at: null,
    rejected_at: null,
    receipt: null,
    deliverable_sha256: null,
    receipt_issued_at: null,
    request_sha256: `sha-${id}`,
    request_json: '{}',
    callback_url: null,
    attachments: null,
    erased_at: null,
    is_test: 0,
    response_schema: null,
    questions: null,
    deadline_at: null,
    deadline_passed_at: null,
    due_at: null,
    ...over,
  };
}

/** A pending mail's outbox row with every column set; `over` replaces any of them. */
export function outboxRow(id: string, over: Partial<OutboxRow> = {}): OutboxRow {
  return {
    id,
    kind: 'task_submitted',
    recipient: 'operator@example-agent.dev',
    reply_to: null,
    subject: `Mail ${id}`,
    text_body: 'body',
    html_body: null,
    task_id: null,
    message_id: null,
    status: 'pending',
    attempts: 0,
    next_attempt_at: AT,
    locked_until: null,
    last_error: null,
    created_at: AT,
    sent_at: null,
    in_reply_to: null,
    claim_rank: 1,
    claim_token: null,
    ...over,
  };
}
