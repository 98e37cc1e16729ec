/**
 * The client's types are generated from the server's own schemas into api-types.ts
 * (scripts/gen-types.ts; a test fails while it is out of date), so a field added to the API shows
 * up here without copying, and the package type-checks without the server's code.
 */
import type {
  ErrorBody,
  ErrorCode,
  MessageInput,
  MessageResponse,
  PublicTask,
  ReceiptAttachment,
  ReceiptPayload,
  ServicesPage,
  SubmissionResponse,
  TaskInput,
  TaskStatus,
  TaskType,
} from './api-types.js';

export type { ErrorBody, ErrorCode, MessageInput, MessageResponse, PublicTask, ServicesPage, SubmissionResponse, TaskInput, TaskStatus, TaskType };

/** One entry of GET /api/v1/services. */
export type ServiceEntry = ServicesPage['services'][number];

/** An attachment as a version-2 receipt signs it (contract, "Evidence: attachments in deliverables"). */
export type SignedAttachment = ReceiptAttachment;

/** A receipt payload: version 1, or version 2 which adds the signed attachments. */
export type Receipt = ReceiptPayload;

/** The answer to a submission, with the Idempotency-Key that was sent (reuse it to retry safely). */
export type Submission = SubmissionResponse & { idempotency_key: string };
