/**
 * human-task-client: a typed client for the human-in-the-loop task service. ESM, on fetch and
 * WebCrypto, with no dependency.
 */

export {
  type ApprovalProblem,
  type ApprovalVerdict,
  approvalChallenge,
  type OperatorJwk,
  type OperatorKey,
  type OperatorKeySet,
  passkeyKeyId,
  type ReceiptApproval,
  verifyApprovals,
} from './approvals.js';
export {
  HumanTaskClient,
  type HumanTaskClientOptions,
  type RequestOptions,
  type SubmitOptions,
  type VerifyReceiptLogTaskOptions,
  type VerifyTaskReceiptOptions,
  type WaitOptions,
  type WaitProgress,
} from './client.js';
export {
  AlreadyAnsweredError,
  ApprovalNotAllowedError,
  CapacityReachedError,
  ClientBlockedError,
  type ClientErrorCode,
  DuplicateTaskError,
  ForbiddenError,
  HumanTaskError,
  InternalError,
  InvalidCursorError,
  InvalidJsonError,
  InvalidSignatureError,
  InvalidTransitionError,
  MalformedRequestError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  QuestionNotFoundError,
  RateLimitedError,
  ServiceUnavailableError,
  SignatureRequiredError,
  TaskNotFoundError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationFailedError,
  WaitTimeoutError,
} from './errors.js';
export {
  type LogCheck,
  type LogCheckName,
  type LogVerdict,
  type VerifyReceiptLogOptions,
  verifyConsistencyProof,
  verifyReceiptLog,
} from './log.js';
export type * from './types.js';
export {
  type Check,
  type HeaderSource,
  type JSONWebKeySet,
  type JWK,
  type ReceiptFailure,
  type ReceiptVerdict,
  type ReceivedFile,
  sameIssuer,
  type VerifyReceiptOptions,
  type VerifyWebhookOptions,
  verifyReceipt,
  verifyWebhook,
  type WebhookFailure,
  type WebhookVerdict,
} from './verify.js';
export { type AgentKey, jwkThumbprint, type VerifyWebBotAuthOptions, verifyWebBotAuth, type WebBotAuthVerdict, webBotAuthSigner } from './web-bot-auth.js';
