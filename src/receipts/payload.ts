import { sha256Hex } from '../domain/canonical.js';

/**
 * The receipt payload, exactly as the contract lists it. Pure: built from the delivered task, so
 * the signer and every verifier agree on what is covered.
 */
export interface ReceiptTimeline {
  submitted_at: string;
  seen_by_operator_at: string | null;
  accepted_at: string | null;
  delivered_at: string;
}

/** A delivered file as the receipt binds it (receipt_version 2). */
export interface ReceiptAttachment {
  name: string;
  media_type: string;
  size: number;
  sha256: string;
}

export interface ReceiptPayload {
  iss: string;
  sub: string;
  iat: number;
  /** 1: issued before attachments existed; 2: also binds `attachments` (possibly empty). */
  receipt_version: 1 | 2;
  task_id: string;
  task_type: string;
  delivery: string;
  deliverable_sha256: string;
  request_sha256: string;
  timeline: ReceiptTimeline;
  /** receipt_version 2 only: every delivered file, in the order the task lists them. */
  attachments?: ReceiptAttachment[];
}

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
