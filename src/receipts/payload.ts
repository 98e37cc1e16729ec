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

const B64url = (description: string) => Type.String({ pattern: '^[A-Za-z0-9_-]*$', description: `${description} (base64url, no padding).` });

export const ReceiptAttestationSchema = Type.Object(
  {
    authenticator_data: B64url('The WebAuthn authenticator data the passkey signed'),
    client_data_json: B64url('The WebAuthn client data JSON; its challenge is the approval challenge of this receipt'),
    signature: B64url('The passkey’s signature over authenticator_data followed by the SHA-256 of client_data_json'),
  },
  { additionalProperties: false, description: 'A WebAuthn assertion, exactly as the operator’s passkey returned it.' },
);
export type ReceiptAttestation = Static<typeof ReceiptAttestationSchema>;

export const ReceiptApprovalSchema = Type.Object(
  {
    key_id: Type.Union([Type.String({ description: 'RFC 7638 thumbprint of the passkey’s public key (see /.well-known/operator-keys.json).' }), Type.Null()], {
      description: 'null for an approval given without a passkey.',
    }),
    at: Iso('When the approval was given.'),
    attestation: Type.Union([ReceiptAttestationSchema, Type.Null()], {
      description: 'The passkey’s assertion over the approval challenge; null when the operator was signed in with a key, not a passkey.',
    }),
  },
  { additionalProperties: false, description: 'One operator’s approval of the deliverable (receipt_version 3); operators stay anonymous.' },
);
export type ReceiptApproval = Static<typeof ReceiptApprovalSchema>;

export const ReceiptPayloadSchema = Type.Object(
  {
    iss: Type.String({ description: 'The issuing service (its BASE_URL).' }),
    sub: Type.String({ description: 'The task id.' }),
    iat: Type.Integer({ description: 'Issued at, Unix seconds.' }),
    receipt_version: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)], {
      description:
        '1: issued before attachments existed; 2: also binds `attachments` (possibly empty); 3: a task that needed more than one approval, ' +
        'also listing `approvals`.',
    }),
    task_id: Type.String(),
    task_type: Type.String(),
    delivery: Type.String(),
    deliverable_sha256: Type.String(),
    request_sha256: Type.String(),
    timeline: ReceiptTimelineSchema,
    attachments: Type.Optional(
      Type.Array(ReceiptAttachmentSchema, {
        description: 'receipt_version 2 and 3: every delivered file, in the order the task lists them.',
      }),
    ),
    approvals: Type.Optional(
      Type.Array(ReceiptApprovalSchema, {
        description:
          'receipt_version 3 only: the approvals that delivered it, in the order given (the proposer’s first). Each attestation is a WebAuthn assertion ' +
          'whose challenge is the SHA-256 of the RFC 8785 JSON {task_id, request_sha256, deliverable_sha256} of this receipt.',
      }),
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
  /** The approvals of a task that needed more than one (receipt_version 3); undefined otherwise. */
  approvals?: ReceiptApproval[];
}

/** SHA-256 (hex) over the UTF-8 bytes of the deliverable, exactly as operator_notes returns it. */
export function deliverableSha256(operatorNotes: string): string {
  return sha256Hex(Buffer.from(operatorNotes, 'utf8'));
}

/**
 * Every receipt issued now binds `attachments`, empty when no file was delivered: so a receipt also
 * proves that nothing else was delivered with the text. Version 2, or 3 with the approvals of a task
 * that needed more than one (contract "Decisions by more than one person").
 */
export function receiptPayload(issuer: string, task: DeliveredTask, issuedAt: Date): ReceiptPayload {
  return {
    iss: issuer,
    sub: task.id,
    iat: Math.floor(issuedAt.getTime() / 1000),
    receipt_version: task.approvals === undefined ? 2 : 3,
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
    ...(task.approvals === undefined ? {} : { approvals: task.approvals }),
  };
}
