import Type, { type Static, type TSchema } from 'typebox';
import type { Limits } from '../../config.js';
import { ANY_TASK_ID_PATTERN } from '../ids.js';
import { OPERATOR_NOTES_MAX } from './admin-schemas.js';
import { taskInputSchema } from './schemas.js';
import { ALL_STATUSES, SOURCES } from './task.js';

/**
 * The admin import (contract "Test tasks and imported history", docs/import.md): task records exported
 * from another deployment. One schema source for validation and OpenAPI.
 */

/** Records per call: more is refused whole (413); `npm run import` sends files in batches. */
export const IMPORT_MAX_RECORDS = 1000;
/** The import route's own body limit: 1,000 records of up to ~10 KB each. */
export const IMPORT_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Timestamps are taken only in the form the service writes them, so they read back unchanged. */
export const CANONICAL_TIMESTAMP = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$';
const RECEIPT_PATTERN = '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = (description: string) => Type.String({ pattern: CANONICAL_TIMESTAMP, description: `${description} ISO 8601 UTC with milliseconds and Z.` });

export function importRecordSchema(limits: Limits) {
  const request = taskInputSchema(limits).properties;
  return Type.Object(
    {
      task_id: Type.String({
        pattern: ANY_TASK_ID_PATTERN.source,
        description: 'Kept exactly as given: <prefix>-<year>-<hex>, the prefix in any case, e.g. task-2025-… or HFAI-2026-…',
      }),
      status: Type.Enum([...ALL_STATUSES], { description: 'Any of the six, the retired under_review and in_progress included.' }),
      task_type: request.task_type,
      description: Type.String({ minLength: 1, maxLength: limits.descriptionMax }),
      location_required: request.location_required,
      location_detail: request.location_detail,
      deadline: Type.Optional(Type.String({ maxLength: 64, description: 'Stored as given (it may be past).' })),
      output_format: request.output_format,
      budget_usd: request.budget_usd,
      contact_email: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'Optional; without it the task is status_poll (no mail).' })),
      delivery: request.delivery,
      requester: request.requester,
      source: Type.Optional(Type.Enum([...SOURCES])),
      created_at: Timestamp('When the task was submitted.'),
      updated_at: Type.Optional(Timestamp('Last change; default: the last history entry.')),
      status_history: Type.Array(Type.Object({ status: Type.Enum([...ALL_STATUSES]), at: Timestamp('') }, { additionalProperties: false }), {
        minItems: 1,
        maxItems: 20,
        description: 'Oldest first, starting with submitted at created_at, ending with status.',
      }),
      operator_notes: Type.Optional(Nullable(Type.String({ maxLength: OPERATOR_NOTES_MAX }))),
      seen_by_operator_at: Type.Optional(Nullable(Timestamp('First view by the operator.'))),
      eta: Type.Optional(Nullable(Timestamp('Expected delivery.'))),
      receipt: Type.Optional(
        Type.String({ pattern: RECEIPT_PATTERN, maxLength: 16_384, description: 'Delivered tasks only: the compact JWS, kept as given.' }),
      ),
      deliverable_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
      receipt_issued_at: Type.Optional(Timestamp('When the receipt was issued.')),
      request_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Default: computed from the request fields.' })),
    },
    { description: 'One task record to import.' },
  );
}
export type ImportRecord = Static<ReturnType<typeof importRecordSchema>>;

export const ImportBodySchema = Type.Object(
  { tasks: Type.Array(Type.Object({}, { additionalProperties: true }), { description: `At most ${IMPORT_MAX_RECORDS} records per call.` }) },
  { description: 'Task records to import.' },
);

export const ImportResultSchema = Type.Object({
  imported: Type.Integer({ description: 'Records stored by this call.' }),
  skipped: Type.Integer({ description: 'Records whose task_id already exists (import is idempotent).' }),
  errors: Type.Array(Type.Object({ index: Type.Integer({ description: 'Position in tasks, from 0.' }), details: Type.Array(Type.String()) })),
});
export type ImportResult = Static<typeof ImportResultSchema>;
