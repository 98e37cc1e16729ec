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

declare const resultShape: unique symbol;

/** The JSON object a task with a response_schema delivers, when no type is given for it. */
export type StructuredResult = Record<string, unknown>;

/**
 * The answer to a submission, with the Idempotency-Key that was sent (reuse it to retry safely).
 * `T` is the shape of the result asked for with response_schema: passing the submission to
 * getTask or waitForResult types their `result` as `T`.
 */
export type Submission<T = StructuredResult> = SubmissionResponse & {
  idempotency_key: string;
  /** true when the service answered with an earlier submission of the same Idempotency-Key (Idempotent-Replayed): no new task was created. */
  replayed: boolean;
  readonly [resultShape]?: T;
};

/** A task whose `result` (the structured answer, null until delivered) has the shape `T`. */
export type TypedTask<T = StructuredResult> = Omit<PublicTask, 'result'> & { result: T | null };

/** A task named by its id, or by the submission that created it (which carries the result's type). */
export type TaskRef<T = StructuredResult> = string | Submission<T>;

/** A message's thread: the operator's replies, oldest first (GET /api/v1/messages/{message_id}). */
export interface MessageThread {
  message_id: string;
  created_at: string;
  subject: string | null;
  replies: { reply_id: string; message: string; created_at: string }[];
}

/** A question of the operator on a task (PublicTask['questions']). */
export type Question = PublicTask['questions'][number];
