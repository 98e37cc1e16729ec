import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at their time, not as it is now.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('task_type', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.notNull())
    .addColumn('location_required', 'integer', (c) => c.notNull())
    .addColumn('location_detail', 'text')
    .addColumn('deadline', 'text')
    .addColumn('output_format', 'text', (c) => c.notNull())
    .addColumn('budget_usd', 'double precision')
    .addColumn('requester', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('delivery', 'text', (c) => c.notNull())
    .addColumn('contact_email', 'text')
    .addColumn('email_unverified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('client_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('status_history', 'text', (c) => c.notNull())
    .addColumn('operator_notes', 'text')
    .addColumn('seen_by_operator_at', 'text')
    .addColumn('eta', 'text')
    .addColumn('accepted_at', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('rejected_at', 'text')
    .addColumn('receipt', 'text')
    .addColumn('deliverable_sha256', 'text')
    .addColumn('receipt_issued_at', 'text')
    .addColumn('request_sha256', 'text', (c) => c.notNull())
    .addColumn('request_json', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tasks_created_idx').on('tasks').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('tasks_status_created_idx').on('tasks').columns(['status', 'created_at']).execute();
  await db.schema.createIndex('tasks_dedupe_idx').on('tasks').columns(['dedupe_key', 'created_at']).execute();
  await db.schema.createIndex('tasks_client_idx').on('tasks').columns(['client_hash', 'created_at']).execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('reply_to', 'text', (c) => c.notNull())
    .addColumn('sender', 'text')
    .addColumn('subject', 'text')
    .addColumn('client_hash', 'text', (c) => c.notNull())
    .addColumn('task_ids', 'text', (c) => c.notNull())
    .addColumn('email_unverified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('messages_created_idx').on('messages').columns(['created_at', 'id']).execute();

  await db.schema
    .createTable('counters')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('counters_expires_idx').on('counters').column('expires_at').execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('client_hash', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('location', 'text')
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['client_hash', 'key'])
    .execute();

  await db.schema
    .createTable('blocklist')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .execute();
  await db.schema.createIndex('blocklist_kind_value_idx').on('blocklist').columns(['kind', 'value']).execute();

  await db.schema
    .createTable('outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('reply_to', 'text')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text')
    .addColumn('task_id', 'text')
    .addColumn('message_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text')
    .execute();
  await db.schema.createIndex('outbox_due_idx').on('outbox').columns(['status', 'next_attempt_at']).execute();

  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'text')
    .execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}
