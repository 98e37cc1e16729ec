import type { Kysely } from 'kysely';

/**
 * The mail worker's claim order as a column (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28): requester mail (claim_rank 0) before
 * operator notifications (1), each oldest due first. The claim sorted every due row by a CASE over
 * `kind` on each claim, so a backlog of 10,000 notifications cost 10,000 rows read per claim of
 * 32 and the outbox fell ever further behind a flood; now each rank is one walk down
 * (status, claim_rank, next_attempt_at, id) that stops after the claim's rows. That index also
 * serves every status-only read, so (status, next_attempt_at) goes. The webhook outbox's claim
 * walks (status, next_attempt_at, id) the same way.
 */
// The notification kinds when this migration was written (mail/priority.ts keeps the live list).
const NOTIFICATIONS = ['task_submitted', 'message_received', 'operator_digest', 'question_answered', 'deadline_passed'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('outbox')
    .addColumn('claim_rank', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.updateTable('outbox').set({ claim_rank: 1 }).where('kind', 'in', NOTIFICATIONS).execute();
  await db.schema.createIndex('outbox_claim_idx').on('outbox').columns(['status', 'claim_rank', 'next_attempt_at', 'id']).execute();
  await db.schema.dropIndex('outbox_due_idx').execute();
  // The webhook outbox's claim, the same walk: with id in the index no tie in next_attempt_at is sorted.
  await db.schema.createIndex('webhook_outbox_claim_idx').on('webhook_outbox').columns(['status', 'next_attempt_at', 'id']).execute();
  await db.schema.dropIndex('webhook_outbox_due_idx').execute();
}
