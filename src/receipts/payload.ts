import Type, { type Static } from 'typebox';
import { sha256Hex } from '../domain/canonical.js';

/**
 * The receipt payload, exactly as the contract lists it. Pure: built from the delivered task, so
 * the signer and every verifier agree on what is covered. The schemas are the one description of
 * it: the TypeScript client's types are generated from them (clients/typescript/scripts/gen-types.ts).
 */
const Iso = (description: string) => Type.String({ format: 'date-time', description });

export const ReceiptTimelineSchema = Type.Object(
  {
    submitted_at: Iso('When the task was submitted.'),
    seen_by_operator_at: Type.Union([Iso('When the operator first opened the task.'), Type.Null()]),
    accepted_at: Type.Union([Iso('When the operator accepted the task.'), Type.Null()]),
    delivered_at: Iso('When the result was delivered.'),
  },
  { additionalProperties: false },
);
export type ReceiptTimeline = Static<typeof ReceiptTimelineSchema>;

export const ReceiptAttachmentSchema = Type.Object(
  {
    name: Type.String(),
    media_type: Type.String(),
    size: Type.Integer({ description: 'Bytes.' }),
    sha256: Type.String({ description: 'Lowercase hex SHA-256 of the file.' }),
  },
  { additionalProperties: false, description: 'A delivered file as the receipt binds it (receipt_version 2).' },
);
export type ReceiptAttachment = Static<typeof ReceiptAttachmentSchema>;

export const ReceiptPayloadSchema = Type.Object(
  {
    iss: Type.String({ description: 'The issuing service (its BASE_URL).' }),
    sub: Type.String({ description: 'The task id.' }),
    iat: Type.Integer({ description: 'Issued at, Unix seconds.' }),
    receipt_version: Type.Union([Type.Literal(1), Type.Literal(2)], {
      description: '1: issued before attachments existed; 2: also binds `attachments` (possibly empty).',
    }),
    task_id: Type.String(),
    task_type: Type.String(),
    delivery: Type.String(),
    deliverable_sha256: Type.String(),
    request_sha256: Type.String(),
    timeline: ReceiptTimelineSchema,
    attachments: Type.Optional(
      Type.Array(ReceiptAttachmentSchema, { description: 'receipt_version 2 only: every delivered file, in the order the task lists them.' }),
    ),
  },
  { additionalProperties: false, description: "The payload of a delivered task's signed receipt (a compact JWS, EdDSA)." },
);
export type ReceiptPayload = Static<typeof ReceiptPayloadSchema>;

export interface DeliveredTask {
  id: string;
  task_type: string;
  delivery: string;
  operator_notes: string;
  request_sha256: string;
  created_at: string;
  seen_by_operator_at: string | null;
  accepted_at: string | null;
  delivered_at: string;
  attachments: ReceiptAttachment[];
}

/** SHA-256 (hex) over the UTF-8 bytes of the deliverable, exactly as operator_notes returns it. */
export function deliverableSha256(operatorNotes: string): string {
  return sha256Hex(Buffer.from(operatorNotes, 'utf8'));
}

/**
 * Every receipt issued now is version 2 and binds `attachments`, empty when no file was delivered:
 * so a receipt also proves that nothing else was delivered with the text.
 */
export function receiptPayload(issuer: string, task: DeliveredTask, issuedAt: Date): ReceiptPayload {
  return {
    iss: issuer,
    sub: task.id,
    iat: Math.floor(issuedAt.getTime() / 1000),
    receipt_version: 2,
    task_id: task.id,
    task_type: task.task_type,
    delivery: task.delivery,
    deliverable_sha256: deliverableSha256(task.operator_notes),
    request_sha256: task.request_sha256,
    timeline: {
      submitted_at: task.created_at,
      seen_by_operator_at: task.seen_by_operator_at,
      accepted_at: task.accepted_at,
      delivered_at: task.delivered_at,
    },
    attachments: task.attachments.map(({ name, media_type, size, sha256 }) => ({ name, media_type, size, sha256 })),
  };
}
