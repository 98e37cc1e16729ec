import Type, { type Static, type TSchema } from 'typebox';
import type { Limits } from '../../config.js';
import { RESPONSE_SCHEMA_FORMATS, RESPONSE_SCHEMA_KEYWORDS, RESPONSE_SCHEMA_MAX_BYTES, RESPONSE_SCHEMA_MAX_DEPTH } from '../answers/response-schema.js';
import { QuestionSchema } from '../questions/questions.js';
import { ONE_LINE_PATTERN } from '../text.js';
import { CALLBACK_URL_MAX_CHARS, WEBHOOK_WHEN } from './callback-url.js';
import { CatalogEntrySchema, TaskTypeSchema } from './profile.js';
import { ALL_STATUSES, DELIVERY_MODES, SOURCES } from './task.js';

/**
 * One schema source per payload. These drive validation (services/tasks/validation.ts), the response
 * serializers, the OpenAPI document and the MCP tool schemas. Input schemas depend on the running
 * limits, so they are built from the config once at start.
 */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A JSON object of any shape (a response schema, a structured result). */
const AnyObject = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

const ResponseSchemaField = AnyObject(
  'Optional JSON Schema (draft 2020-12) of the JSON answer you want back; the operator fills a form made from it and the result is validated against it. ' +
    `Top level "type": "object"; at most ${RESPONSE_SCHEMA_MAX_BYTES / 1024} KB, ${RESPONSE_SCHEMA_MAX_DEPTH} levels; keywords: ${RESPONSE_SCHEMA_KEYWORDS.join(', ')} ` +
    `(format: ${RESPONSE_SCHEMA_FORMATS.join(', ')}; $ref to "#/$defs/..." only, no cycles). With it, output_format defaults to structured_json.`,
);

/** Bounds of the request's `approvals` (contract "Decisions by more than one person"). */
export const APPROVALS_MIN = 1;
export const APPROVALS_MAX = 5;

export const ApprovalsSchema = Type.Object(
  {
    required: Type.Integer({ minimum: 2, maximum: APPROVALS_MAX, description: 'How many distinct operators must approve (the request’s approvals).' }),
    given: Type.Integer({
      minimum: 0,
      description: 'Approvals of the deliverable now proposed, the proposer’s included; 0 while nothing is proposed (and after a send-back).',
    }),
  },
  { description: 'Present when the request asked for more than one approval: delivered once given reaches required.' },
);
export type Approvals = Static<typeof ApprovalsSchema>;

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export function taskInputSchema(limits: Limits) {
  return Type.Object(
    {
      task_type: TaskTypeSchema,
      description: Type.String({
        minLength: limits.descriptionMin,
        maxLength: limits.descriptionMax,
        description: 'What to do, where, and what success looks like.',
      }),
      location_required: Type.Optional(Type.Boolean({ description: 'Whether the task needs physical presence. Default false.' })),
      location_detail: Type.Optional(
        Type.String({
          maxLength: limits.locationDetailMax,
          pattern: ONE_LINE_PATTERN,
          description: 'City, address or area, on one line; needed in practice when location_required is true.',
        }),
      ),
      deadline: Type.Optional(
        Type.String({ description: 'ISO 8601 date-time, with or without offset (without one it is read as UTC). Must be in the future.' }),
      ),
      output_format: Type.Optional(
        Type.String({
          maxLength: limits.shortTextMax,
          pattern: ONE_LINE_PATTERN,
          description: 'Default text_report. Suggested: text_report, text_report_with_photos, structured_json, annotated_screenshots, video, or free text.',
        }),
      ),
      budget_usd: Type.Optional(
        Type.Number({ minimum: 0, maximum: limits.budgetMax, deprecated: true, description: 'Deprecated; accepted and ignored (the pilot is free).' }),
      ),
      contact_email: Type.Optional(
        Type.String({
          format: 'email',
          maxLength: 254,
          description: 'Where the result is e-mailed. Required unless delivery is status_poll. Must be a real mailbox (MX-checked); never returned.',
        }),
      ),
      delivery: Type.Optional(
        Type.Enum([...DELIVERY_MODES], {
          description: 'email (default) or status_poll (result in operator_notes; limited per client per day, 1 task with delivery status_poll by default).',
        }),
      ),
      requester: Type.Optional(
        Type.String({ maxLength: limits.shortTextMax, pattern: ONE_LINE_PATTERN, description: 'Optional self-declared agent, company or system identifier.' }),
      ),
      callback_url: Type.Optional(
        Type.String({
          maxLength: CALLBACK_URL_MAX_CHARS,
          writeOnly: true,
          description:
            'Optional https:// URL that receives a signed POST (Standard Webhooks, v1a Ed25519 signature; keys at /.well-known/jwks.json) ' +
            `${WEBHOOK_WHEN}, instead of polling. Must not point at a private or loopback address; never returned.`,
        }),
      ),
      response_schema: Type.Optional(ResponseSchemaField),
      approvals: Type.Optional(
        Type.Integer({
          minimum: APPROVALS_MIN,
          maximum: APPROVALS_MAX,
          description:
            `How many distinct operators must approve the deliverable before it is delivered, ${APPROVALS_MIN} to ${APPROVALS_MAX}; default 1. ` +
            'With more than one, the task stays accepted while approvals are gathered (approvals: {required, given} on the task), and the receipt ' +
            '(receipt_version 3) lists each approval, signed by the operator’s passkey when they used one.',
        }),
      ),
    },
    { description: 'A task request.' },
  );
}
export type TaskInput = Static<ReturnType<typeof taskInputSchema>>;

export function messageInputSchema(limits: Limits) {
  return Type.Object(
    {
      message: Type.String({
        minLength: limits.messageMin,
        maxLength: limits.messageMax,
        description: 'Free-form text: a question, scoping, or a withdrawal naming a task_id.',
      }),
      reply_to: Type.String({
        format: 'email',
        maxLength: 254,
        description: 'A real mailbox (MX-checked): the only way the operator can answer. Never returned.',
      }),
      from: Type.Optional(Type.String({ maxLength: limits.shortTextMax, pattern: ONE_LINE_PATTERN, description: 'Agent, company or system identifier.' })),
      subject: Type.Optional(Type.String({ maxLength: limits.shortTextMax, pattern: ONE_LINE_PATTERN })),
      task_id: Type.Optional(
        Type.String({
          maxLength: 200,
          description:
            'The task this message is about (an existing task_id): the operator sees the message on that task. Ids named in the text are linked too.',
        }),
      ),
    },
    { description: 'A message to the operator.' },
  );
}
export type MessageInput = Static<ReturnType<typeof messageInputSchema>>;

export const StatusSchema = Type.Enum([...ALL_STATUSES], {
  description: 'under_review and in_progress are retired: never emitted, only kept in old histories.',
});

export const PublicAttachmentSchema = Type.Object(
  {
    attachment_id: Type.String({ description: 'att-<year>-<32 hex>' }),
    name: Type.String({ description: 'A safe file name (no path, no control or bidi characters, at most 120 characters).' }),
    media_type: Type.String({ description: 'Detected from the bytes; application/octet-stream when they prove nothing (never trusted from the uploader).' }),
    size: Type.Integer({ minimum: 0, description: 'Bytes.' }),
    sha256: Type.String({ description: 'SHA-256 (hex) of the file exactly as served; signed into the receipt.' }),
    url: Type.String({ description: 'Absolute download URL: <BASE_URL>/api/v1/tasks/<task_id>/attachments/<attachment_id>.' }),
  },
  { description: 'A file delivered with the task (evidence).' },
);
export type PublicAttachment = Static<typeof PublicAttachmentSchema>;

export const PublicTaskSchema = Type.Object(
  {
    task_id: Type.String({ description: 'task-<year>-<32 hex>; unguessable; acts as the access token.' }),
    status: StatusSchema,
    task_type: TaskTypeSchema,
    description: Type.String(),
    location_required: Type.Boolean(),
    location_detail: Nullable(Type.String()),
    deadline: Nullable(Type.String()),
    output_format: Type.String(),
    budget_usd: Nullable(Type.Number({ deprecated: true })),
    requester: Type.String(),
    source: Type.Enum([...SOURCES]),
    created_at: DateTime('When the task was submitted.'),
    updated_at: DateTime('Last change.'),
    status_history: Type.Array(Type.Object({ status: StatusSchema, at: Type.String({ format: 'date-time' }) })),
    operator_notes: Nullable(Type.String({ description: 'For status_poll the deliverable itself; for rejections the reason.' })),
    seen_by_operator_at: Nullable(Type.String({ format: 'date-time', description: 'Stamped when the operator first opens the task.' })),
    eta: Nullable(Type.String({ format: 'date-time', description: 'Delivery estimate; present once accepted.' })),
    receipt: Type.Optional(
      Type.String({
        description:
          'Compact JWS (EdDSA, Ed25519); present once delivered. Keys: /.well-known/jwks.json. Payload (receipt_version 2): iss, sub, iat, task_id, task_type, delivery, ' +
          'deliverable_sha256, request_sha256, timeline, and attachments [{name, media_type, size, sha256}]; receipts issued before files existed are receipt_version 1, without attachments; ' +
          'a task submitted with approvals above 1 gets receipt_version 3, which also lists approvals [{key_id, at, attestation}] (passkey keys: /.well-known/operator-keys.json).',
      }),
    ),
    deliverable_sha256: Type.Optional(Type.String({ description: 'SHA-256 (hex) over the UTF-8 bytes of operator_notes; present once delivered.' })),
    receipt_issued_at: Type.Optional(Type.String({ format: 'date-time' })),
    receipt_log_index: Type.Optional(
      Nullable(
        Type.Integer({
          description:
            "The receipt's leaf index in the public append-only log (/log/checkpoint); null until the sequencer integrates it (within seconds). " +
            'Its inclusion proof: GET /api/v1/tasks/{task_id}/receipt-proof.',
        }),
      ),
    ),
    attachments: Type.Optional(
      Type.Array(PublicAttachmentSchema, {
        description:
          'Files delivered with the result, present once delivered (an empty array when none). Each sha256 is signed into the receipt (receipt_version 2).',
      }),
    ),
    response_schema: Nullable(AnyObject('The response_schema of the request, as given; null when none.')),
    result: Nullable(
      AnyObject(
        'The structured answer, valid against response_schema, once delivered; null before and for tasks without a schema. ' +
          'operator_notes holds its RFC 8785 canonical JSON, which deliverable_sha256 and the receipt bind.',
      ),
    ),
    questions: Type.Array(QuestionSchema, {
      description: "The operator's questions about the task, oldest first, each with its answer once given ([] when none).",
    }),
    approvals: Type.Optional(ApprovalsSchema),
    awaiting_answer: Type.Boolean({
      description:
        'true while a question of the operator awaits your answer: answer it with POST /api/v1/tasks/{task_id}/questions/{question_id}/answer {answer} ' +
        '(MCP: answer_operator_question); the work waits for it.',
    }),
  },
  { description: 'A task as stored. The contact e-mail is never part of it.' },
);
export type PublicTask = Static<typeof PublicTaskSchema>;

/** The body of every webhook POST (contract "Webhooks"). */
export const WebhookEventSchema = Type.Object(
  {
    type: Type.Enum(['task.accepted', 'task.delivered', 'task.rejected', 'task.question', 'task.deadline_passed', 'task.approval'], {
      description:
        'What happened: a status change, a question of the operator (task.question), the deadline of an accepted task passed (task.deadline_passed), ' +
        'or, on a task needing more than one approval, a proposal, an approval or a send-back (task.approval: data.approvals says where it stands).',
    }),
    timestamp: DateTime('When it happened.'),
    data: PublicTaskSchema,
  },
  { description: 'A task event, POSTed to the callback_url with webhook-id, webhook-timestamp and webhook-signature headers.' },
);

const Warnings = Type.Optional(Type.Array(Type.String(), { description: 'Unknown fields that were ignored.' }));

export const SubmissionResponseSchema = Type.Object({
  task_id: Type.String(),
  status: StatusSchema,
  created_at: Type.String({ format: 'date-time' }),
  status_url: Type.String({ description: 'Absolute URL of GET /api/v1/tasks/<task_id>.' }),
  status_page: Type.String({ description: 'Absolute URL of the human status page /tasks?id=<task_id>.' }),
  message: Type.String(),
  warnings: Warnings,
});
export type SubmissionResponse = Static<typeof SubmissionResponseSchema>;

const QuotaLeftSchema = Type.Object({
  limit: Type.Integer({ minimum: 0 }),
  remaining: Type.Integer({ minimum: 0, description: 'Units left in the current window, before this request.' }),
});

/** The answer to a dry run (POST /api/v1/tasks?dry_run=true, submit_human_task with dry_run: true). */
export const DryRunResponseSchema = Type.Object(
  {
    dry_run: Type.Literal(true),
    would_accept: Type.Literal(true, { description: 'The submission would be accepted now (a refusal is answered with its error instead).' }),
    limits: Type.Object(
      {
        tasks_per_hour: QuotaLeftSchema,
        tasks_per_day: QuotaLeftSchema,
        status_poll_per_day: QuotaLeftSchema,
      },
      { description: 'The limits that apply to this client, as they stand.' },
    ),
    warnings: Warnings,
  },
  { description: 'Every check a submission runs passed; nothing was created, sent or counted.' },
);
export type DryRunResponse = Static<typeof DryRunResponseSchema>;

export const MessageResponseSchema = Type.Object({
  message_id: Type.String({ description: 'msg-<year>-<32 hex>' }),
  created_at: Type.String({ format: 'date-time' }),
  message: Type.String({ description: 'Confirmation text.' }),
  thread_token: Type.String({
    description:
      'mt_<43 base64url>, shown once: GET /api/v1/messages/{message_id} with Authorization: Bearer <thread_token> lists the operator’s replies (for agents without a mailbox).',
  }),
  warnings: Warnings,
});
export type MessageResponse = Static<typeof MessageResponseSchema>;

export const HealthSchema = Type.Object({
  status: Type.String({ description: 'ok when up' }),
  service: Type.String(),
  api_version: Type.String(),
  time: Type.String({ format: 'date-time' }),
});
export type Health = Static<typeof HealthSchema>;

export const ReadinessSchema = Type.Object({
  status: Type.Literal('ready'),
  checks: Type.Object({
    store: Type.Literal('ok'),
    migrations: Type.Literal('ok'),
    workers: Type.Literal('ok'),
    timestamps: Type.Optional(
      Type.String({
        description:
          'With TSA_URL only: "ok", or "failing: <why>" while the time-stamp authority hangs, answers garbage or signs another hash. It delays time-stamps, never receipts, so the instance stays ready.',
      }),
    ),
  }),
  time: Type.String({ format: 'date-time' }),
});
export type Readiness = Static<typeof ReadinessSchema>;

export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'Machine code from the closed set in the docs.' }),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.String())),
    existing_task_id: Type.Optional(Type.String()),
    limit: Type.Optional(Type.String()),
    retry_after_seconds: Type.Optional(Type.Integer()),
    from: Type.Optional(Type.String()),
    to: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

/** GET /api/v1/services: one page of the catalog (domain/tasks/profile.ts defines an entry). */
export const ServicesPageSchema = Type.Object({
  services: Type.Array(CatalogEntrySchema),
  next_cursor: Nullable(Type.String({ description: 'Opaque; pass as cursor for the next page. null on the last page.' })),
});
export type ServicesPage = Static<typeof ServicesPageSchema>;

/** "My tasks" (docs/verified-agents.md): page size bounds. */
export const MY_TASKS_DEFAULT = 20;
export const MY_TASKS_MAX = 100;

export const MyTasksQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MY_TASKS_MAX, description: `Page size, 1 to ${MY_TASKS_MAX}; default ${MY_TASKS_DEFAULT}.` })),
  cursor: Type.Optional(Type.String({ maxLength: 400, description: 'Opaque next_cursor from the previous page.' })),
  status: Type.Optional(Type.Enum(['submitted', 'accepted', 'delivered', 'rejected'], { description: 'Only tasks in this status.' })),
});
export type MyTasksQuery = Static<typeof MyTasksQuerySchema>;

export const MyTasksPageSchema = Type.Object(
  {
    tasks: Type.Array(PublicTaskSchema),
    next_cursor: Nullable(Type.String({ description: 'Opaque; pass as cursor for the next page. null on the last page.' })),
  },
  { description: "A verified agent's own tasks, newest update first." },
);
export type MyTasksPage = Static<typeof MyTasksPageSchema>;
