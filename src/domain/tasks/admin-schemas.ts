import Type, { type Static, type TSchema } from 'typebox';
import { PublicTaskSchema, StatusSchema } from './schemas.js';
import { ALL_STATUSES, DELIVERY_MODES } from './task.js';

/**
 * Payloads of the operator (admin) API: one source for validation, the serializers and OpenAPI.
 * The operator sees everything the public status endpoint hides (contact e-mail, delivery mode,
 * the e-mail check's outcome) plus the lifecycle timestamps.
 */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = (description: string) => Nullable(Type.String({ format: 'date-time', description }));

/** Longest deliverable or reason the operator can write (the 64 KB body limit applies too). */
export const OPERATOR_NOTES_MAX = 50_000;
export const ADMIN_PAGE_DEFAULT = 50;
export const ADMIN_PAGE_MAX = 200;

/**
 * A WebAuthn assertion as @simplewebauthn/browser returns it (AuthenticationResponseJSON): the
 * operator's passkey signing the approval challenge. Checked by the service, not by the schema.
 */
export const AssertionSchema = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'A WebAuthn assertion (AuthenticationResponseJSON) by one of your passkeys whose challenge is the approval challenge: the SHA-256 of the RFC 8785 JSON ' +
    '{task_id, request_sha256, deliverable_sha256} (proposal.challenge, base64url). Required from a console session opened with a passkey; without it the approval is unsigned.',
});

const ApproverSchema = Type.Object({
  approver: Type.String({ description: 'The operator_id, or "owner".' }),
  at: Type.String({ format: 'date-time' }),
  signed: Type.Boolean({ description: 'Signed by the approver’s passkey (the receipt carries its attestation).' }),
});

export const ProposalSchema = Type.Object(
  {
    proposed_by: Type.String({ description: 'The operator_id that proposed the deliverable, or "owner".' }),
    proposed_at: Type.String({ format: 'date-time' }),
    operator_notes: Type.String({ description: 'The proposed deliverable (for a task with a response_schema, the canonical JSON of the result).' }),
    deliverable_sha256: Type.String(),
    challenge: Type.String({ description: 'What a passkey signs to approve it: base64url of the 32-byte approval challenge.' }),
    approvals: Type.Array(ApproverSchema, { description: 'The approvals so far, the proposer’s first.' }),
  },
  { description: 'The deliverable waiting for approvals.' },
);
export type Proposal = Static<typeof ProposalSchema>;

export const SentBackSchema = Type.Object(
  {
    by: Type.String({ description: 'The operator_id that sent the proposal back, or "owner".' }),
    at: Type.String({ format: 'date-time' }),
    reason: Type.String(),
  },
  { description: 'The last proposal sent back, and why (until the next proposal).' },
);
export type SentBack = Static<typeof SentBackSchema>;

/** Longest reason for sending a proposal back. */
export const SEND_BACK_REASON_MAX = 2_000;

export const ApprovalDecisionSchema = Type.Object(
  {
    decision: Type.Enum(['approve', 'send_back'], {
      description: 'approve: the proposed deliverable as it is; send_back: refuse it with a reason (approvals return to 0; the proposer sees the reason).',
    }),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: SEND_BACK_REASON_MAX, description: 'Why it is sent back (required with send_back).' })),
    assertion: Type.Optional(AssertionSchema),
  },
  { additionalProperties: false, description: 'An operator’s decision on the proposed deliverable.' },
);
export type ApprovalDecision = Static<typeof ApprovalDecisionSchema>;

export const AdminTaskSchema = Type.Object(
  {
    ...PublicTaskSchema.properties,
    contact_email: Nullable(Type.String({ description: 'Where the result is e-mailed; null for status_poll tasks. Operator only.' })),
    delivery: Type.Enum([...DELIVERY_MODES]),
    email_unverified: Type.Boolean({ description: 'The MX check could not be completed at submission (DNS outage): check the address by hand.' }),
    accepted_at: Timestamp('When the task was accepted.'),
    delivered_at: Timestamp('When the task was delivered.'),
    rejected_at: Timestamp('When the task was rejected.'),
    is_test: Type.Boolean({
      description: 'The description or requester carries the word "test" (whole word, any case): a test task, left out of the response-time figures.',
    }),
    request_sha256: Type.String({
      description: 'SHA-256 of the RFC 8785 canonical JSON of the request less contact_email and callback_url; signed into the receipt.',
    }),
    assignee: Nullable(Type.String({ description: 'The operator_id the task is assigned to; null when unassigned. Operator only.' })),
    agent: Nullable(
      Type.Object(
        {
          key_id: Type.String({ description: "The verified agent's key id (RFC 7638 thumbprint of its Ed25519 key)." }),
          directory: Type.String({ description: 'The host of its key directory, with :port when not the default.' }),
        },
        { description: 'The agent that signed the submission (Web Bot Auth); null when unsigned. Operator only.' },
      ),
    ),
    proposal: Type.Optional(Nullable(ProposalSchema)),
    sent_back: Type.Optional(Nullable(SentBackSchema)),
  },
  { description: 'A task as the operator sees it. proposal and sent_back are present on tasks needing more than one approval.' },
);
export type AdminTask = Static<typeof AdminTaskSchema>;

/** Longest reply the operator can send to a message. */
export const REPLY_MAX = 10_000;

export const MessageReplyInputSchema = Type.Object(
  {
    message: Type.String({
      minLength: 1,
      maxLength: REPLY_MAX,
      description: 'The answer; mailed to the message’s reply_to from MAIL_FROM, threaded under the message.',
    }),
  },
  { additionalProperties: false, description: 'The operator’s reply to a message.' },
);
export type MessageReplyInput = Static<typeof MessageReplyInputSchema>;

export const MessageReplySchema = Type.Object(
  {
    reply_id: Type.String({ description: 'rpl-<year>-<32 hex>' }),
    message_id: Type.String(),
    message: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { description: 'A reply the operator sent to a message.' },
);
export type MessageReply = Static<typeof MessageReplySchema>;

export const AdminMessageSchema = Type.Object(
  {
    message_id: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    from: Nullable(Type.String()),
    subject: Nullable(Type.String()),
    message: Type.String(),
    reply_to: Type.String({ description: 'Operator only: the address to answer.' }),
    email_unverified: Type.Boolean(),
    task_ids: Type.Array(Type.String(), { description: 'Task ids the message names (a withdrawal or a question about a task).' }),
    replies: Type.Optional(Type.Array(MessageReplySchema, { description: 'On a task in full: the operator’s replies, oldest first.' })),
  },
  { description: 'A message to the operator.' },
);
export type AdminMessage = Static<typeof AdminMessageSchema>;

export const AdminTaskDetailSchema = Type.Object(
  { ...AdminTaskSchema.properties, messages: Type.Array(AdminMessageSchema, { description: 'Messages that name this task, newest first.' }) },
  { description: 'One task in full, with the messages that name it.' },
);
export type AdminTaskDetail = Static<typeof AdminTaskDetailSchema>;

const NextCursor = Nullable(Type.String({ description: 'Opaque, tamper-evident; null on the last page.' }));

export const QueueSchema = Type.Object({ tasks: Type.Array(AdminTaskSchema), next_cursor: NextCursor });
export type Queue = Static<typeof QueueSchema>;

export const MessageListSchema = Type.Object({ messages: Type.Array(AdminMessageSchema), next_cursor: NextCursor });
export type MessageList = Static<typeof MessageListSchema>;

/** `open` = submitted + accepted: the work still waiting on the operator. */
export const QUEUE_FILTERS = [...ALL_STATUSES, 'open'] as const;
export type QueueFilter = (typeof QUEUE_FILTERS)[number];

const Limit = Type.Integer({ minimum: 1, maximum: ADMIN_PAGE_MAX, description: `Page size, 1 to ${ADMIN_PAGE_MAX}; default ${ADMIN_PAGE_DEFAULT}.` });
const Cursor = Type.String({ maxLength: 1000, description: 'next_cursor of the previous page.' });

export const QueueQuerySchema = Type.Object({
  status: Type.Optional(
    Type.Enum([...QUEUE_FILTERS], {
      description: 'One status, or open (submitted + accepted, and the retired under_review and in_progress of imported tasks).',
    }),
  ),
  order: Type.Optional(
    Type.Enum(['newest', 'oldest', 'due'], {
      description: 'newest first (default), oldest first (the longest wait on top), or due first (the earlier of deadline and response target).',
    }),
  ),
  test: Type.Optional(Type.Enum(['only', 'exclude'], { description: 'only: test tasks alone; exclude: without test tasks. Default: both.' })),
  assignee: Type.Optional(
    Type.String({ maxLength: 200, description: 'An operator_id: the tasks assigned to them; none: the unassigned tasks. Default: all.' }),
  ),
  limit: Type.Optional(Limit),
  cursor: Type.Optional(Cursor),
});

export type QueueQuery = Static<typeof QueueQuerySchema>;

/** A plain list, newest first: a page size and the previous page's cursor (messages, the blocklist). */
export const PageQuerySchema = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) });
export type PageQuery = Static<typeof PageQuerySchema>;

export const TaskPatchSchema = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    eta: Type.Optional(Type.String({ format: 'date-time', description: 'Delivery estimate, in the future; set when accepting or while accepted.' })),
    operator_notes: Type.Optional(
      Nullable(
        Type.String({
          maxLength: OPERATOR_NOTES_MAX,
          description: 'The deliverable (required to deliver), the rejection reason, or working notes; editable while open, frozen once delivered.',
        }),
      ),
    ),
    result: Type.Optional(
      Type.Unknown({
        description:
          'With status "delivered" on a task that has a response_schema (and only then): the structured answer, valid against that schema. ' +
          'It replaces operator_notes, which become its RFC 8785 canonical JSON.',
      }),
    ),
    assignee: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'The operator_id to assign the task to, or null to unassign it.' }))),
    assertion: Type.Optional(AssertionSchema),
  },
  {
    additionalProperties: false,
    description:
      'A status change and/or edits by the operator. On a task needing more than one approval, status "delivered" proposes the deliverable ' +
      '(the task stays accepted); assertion, optional, signs that proposal with a passkey.',
  },
);
export type TaskPatch = Static<typeof TaskPatchSchema>;

const Duration = Type.Object({ median: Nullable(Type.Number()), p90: Nullable(Type.Number()), samples: Type.Integer() });
const CapUse = Type.Object({ used: Type.Integer(), cap: Type.Integer(), remaining: Type.Integer() });

/** The last retention run of any instance (services/runtime/retention.ts). */
export const RetentionRunSchema = Type.Object(
  {
    ran_at: Type.String({ format: 'date-time' }),
    retention_days: Type.Integer(),
    erased_tasks: Type.Integer({ description: 'Final tasks whose contact e-mail (and callback URL, attachments) were erased.' }),
    erased_messages: Type.Integer({ description: 'Messages whose text and addresses were erased.' }),
    deleted_sent_mail: Type.Integer(),
    deleted_finished_webhooks: Type.Integer({ description: 'Delivered (or gone) webhook events and their attempt logs.' }),
    deleted_idempotency_records: Type.Integer(),
    deleted_counters: Type.Integer(),
    deleted_revoked_sessions: Type.Integer(),
    deleted_expired_blocks: Type.Integer({ description: 'Blocklist entries (mostly automatic blocks) past their expiry.' }),
    deleted_push_notices: Type.Integer({ description: 'Push notification claims older than 7 days.' }),
    deleted_log_checkpoints: Type.Integer({ description: 'Receipt-log checkpoints older than the latest (only the latest is served).' }),
    duration_ms: Type.Integer(),
  },
  { description: 'What the last retention run erased and deleted.' },
);

export const AdminStatsSchema = Type.Object({
  window_days: Type.Integer({ description: 'The figures cover tasks created in this many last days.' }),
  counts_by_status: Type.Record(Type.String(), Type.Integer()),
  open_queue: Type.Integer({ description: 'submitted + accepted' }),
  time_to_first_view_seconds: Duration,
  time_to_acceptance_seconds: Duration,
  daily_caps: Type.Object(
    { tasks: CapUse, emails: CapUse, resets_at: Type.String({ format: 'date-time' }) },
    { description: "Today's use of the global daily caps." },
  ),
  retention: Type.Union([RetentionRunSchema, Type.Null()], { description: 'The last retention run (RETENTION_DAYS), null before the first.' }),
});
export type AdminStats = Static<typeof AdminStatsSchema>;

export const StatsQuerySchema = Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'Window in days; default 30.' })) });
export type StatsQuery = Static<typeof StatsQuerySchema>;

export const BLOCK_KINDS = ['ip', 'email', 'domain', 'requester', 'agent_key', 'agent_directory'] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];

/** A blocklist entry as the operator adds it; the value's form per kind is checked by services/console/blocklist.ts. */
export const BlockInputSchema = Type.Object({
  kind: Type.Enum([...BLOCK_KINDS]),
  value: Type.String({
    minLength: 1,
    description:
      'ip: an IPv4 address, or an IPv6 address or /64 prefix; email; domain (covers subdomains); requester; agent_key: a verified agent key id (RFC 7638 thumbprint); agent_directory: a key directory host, with :port when not the default.',
  }),
  reason: Type.Optional(Type.String({ maxLength: 500 })),
  expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'When the block ends; omit for a permanent block.' })),
});
export type BlockInput = Static<typeof BlockInputSchema>;

export const OUTBOX_STATUSES = ['pending', 'sent', 'failed'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];
export const OUTBOX_LIST_DEFAULT = 50;
export const OUTBOX_LIST_MAX = 200;

export const OutboxQuerySchema = Type.Object({
  status: Type.Optional(Type.Enum([...OUTBOX_STATUSES])),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: OUTBOX_LIST_MAX, description: `Page size, 1 to ${OUTBOX_LIST_MAX}; default ${OUTBOX_LIST_DEFAULT}.` }),
  ),
});
export type OutboxQuery = Static<typeof OutboxQuerySchema>;
