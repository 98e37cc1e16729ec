import Type, { type Static, type TSchema } from 'typebox';
import { ROLES } from './actor.js';

/**
 * Payloads of the team API (contract "A team of operators"): operators, personal keys and the
 * audit log. One source for validation, the serializers and OpenAPI.
 */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A personal key: `hto_` and 43 base64url characters (256 random bits). */
export const PERSONAL_KEY_PATTERN = /^hto_[A-Za-z0-9_-]{43}$/;

const RoleSchema = Type.Enum([...ROLES], {
  description: 'operator: triage, ask, answer, attach, deliver, reject; admin: also operators, blocklist, outboxes, import, backups, keys.',
});

export const OperatorInputSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'How the console names the person.' }),
  email: Type.String({ format: 'email', maxLength: 254 }),
  role: RoleSchema,
});
export type OperatorInput = Static<typeof OperatorInputSchema>;

export const OperatorPatchSchema = Type.Object({
  role: Type.Optional(RoleSchema),
  disabled: Type.Optional(Type.Boolean({ description: 'true ends the operator’s sessions and keys at once, on every instance.' })),
});
export type OperatorPatch = Static<typeof OperatorPatchSchema>;

export const OperatorSchema = Type.Object({
  operator_id: Type.String({ description: 'op-<32 lowercase hex>' }),
  name: Type.String(),
  email: Type.String(),
  role: RoleSchema,
  disabled: Type.Boolean(),
  on_duty: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
});
export type Operator = Static<typeof OperatorSchema>;

export const OperatorCreatedSchema = Type.Object({
  ...OperatorSchema.properties,
  invite_url: Type.String({ description: 'Single use, valid 24 hours: registers a passkey for the operator.' }),
});
export type OperatorCreated = Static<typeof OperatorCreatedSchema>;

export const OperatorListSchema = Type.Object({ operators: Type.Array(OperatorSchema) });

export const KeyCreatedSchema = Type.Object({
  key_id: Type.String(),
  key: Type.String({ description: 'hto_<43 base64url>: shown once, stored hashed.' }),
  created_at: Type.String({ format: 'date-time' }),
});
export type KeyCreated = Static<typeof KeyCreatedSchema>;

export const KeySchema = Type.Object({
  key_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Nullable(Type.String({ format: 'date-time' })),
});
export type KeyView = Static<typeof KeySchema>;
export const KeyListSchema = Type.Object({ keys: Type.Array(KeySchema) });

export const PasskeySchema = Type.Object({
  passkey_id: Type.String({ description: 'The WebAuthn credential id, base64url.' }),
  created_at: Type.String({ format: 'date-time' }),
  removed_at: Nullable(Type.String({ format: 'date-time' })),
});
export type PasskeyView = Static<typeof PasskeySchema>;
export const PasskeyListSchema = Type.Object({ passkeys: Type.Array(PasskeySchema) });

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 200;

export const AuditQuerySchema = Type.Object({
  task_id: Type.Optional(Type.String({ maxLength: 200 })),
  operator_id: Type.Optional(Type.String({ maxLength: 200, description: 'An operator_id, or "owner" for ADMIN_KEY.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_PAGE_MAX, description: `Page size, 1 to ${AUDIT_PAGE_MAX}; default ${AUDIT_PAGE_DEFAULT}.` })),
  cursor: Type.Optional(Type.String({ maxLength: 1000 })),
});
export type AuditQuery = Static<typeof AuditQuerySchema>;

export const AuditEntrySchema = Type.Object({
  at: Type.String({ format: 'date-time' }),
  actor: Type.String({ description: 'An operator_id, "owner" (ADMIN_KEY), or "anonymous" (a failed sign-in naming nobody).' }),
  action: Type.String({ description: 'A dotted name: task.accepted, task.assigned, signin.failed, key.created, …' }),
  task_id: Nullable(Type.String()),
  details: Type.Record(Type.String(), Type.Unknown()),
  hash: Nullable(
    Type.String({
      description:
        "The entry's link in the audit hash chain: lowercase hex SHA-256 of the previous entry's hash (64 zeros before the first), a line feed, and the RFC 8785 " +
        'canonical JSON of this entry without hash. Null for a few seconds, until the receipt log’s sequencer chains it; the head is in each /log/checkpoint.',
    }),
  ),
});
export type AuditEntry = Static<typeof AuditEntrySchema>;
export const AuditListSchema = Type.Object({ entries: Type.Array(AuditEntrySchema), next_cursor: Nullable(Type.String()) });
export type AuditList = Static<typeof AuditListSchema>;
