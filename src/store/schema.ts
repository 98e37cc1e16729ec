import type { Generated } from 'kysely';

/**
 * The tables, as Kysely sees them. Both stores use the same column types: text for ids and
 * ISO 8601 UTC timestamps (which sort as strings), integer 0/1 for booleans, JSON as text.
 */
export interface TasksTable {
  id: string;
  status: string;
  task_type: string;
  description: string;
  /** sha256(task_type + normalized description): the duplicate-detection key. */
  dedupe_key: string;
  location_required: number;
  location_detail: string | null;
  deadline: string | null;
  output_format: string;
  budget_usd: number | null;
  requester: string;
  source: string;
  delivery: string;
  contact_email: string | null;
  email_unverified: number;
  client_hash: string;
  created_at: string;
  updated_at: string;
  /** JSON array of {status, at}. */
  status_history: string;
  /**
   * The deliverable. Free text for a task without a response schema; for a task with one, the
   * structured result as its RFC 8785 canonical JSON (migration 120 added no column of its own):
   * the receipt's deliverable hash is over these bytes either way, and readers parse it back
   * (the public task's `result`) when `response_schema` is set. The name is the contract's field.
   */
  operator_notes: string | null;
  seen_by_operator_at: string | null;
  eta: string | null;
  accepted_at: string | null;
  delivered_at: string | null;
  rejected_at: string | null;
  receipt: string | null;
  deliverable_sha256: string | null;
  receipt_issued_at: string | null;
  /** SHA-256 of the RFC 8785 canonical JSON of the request less contact_email. */
  request_sha256: string;
  /** That canonical JSON itself, so the receipt's request hash can be re-derived. */
  request_json: string;
  /** JSON array of the public attachments, frozen at delivery (migration 070); NULL before. */
  attachments: string | null;
  /** Where webhooks go (migration 065); private like contact_email, never returned. */
  callback_url: string | null;
  /** When retention erased the contact e-mail (and callback URL, attachments) of this final task (migration 100). */
  erased_at: string | null;
  /** 1 when the description or requester carries the word "test" (migration 110, docs/import.md). */
  is_test: number;
  /** The request's response_schema as JSON text (migration 120, docs/answers.md); NULL when none. */
  response_schema: string | null;
  /** JSON array of the operator's questions with their answers (migration 130); NULL when none. */
  questions: string | null;
  /** The deadline as a UTC instant, for the deadline sweep (migration 130); NULL without one, and on imported tasks. */
  deadline_at: string | null;
  /** When the sweep announced that the deadline of this accepted task passed (migration 130): once per task. */
  deadline_passed_at: string | null;
  /** The earlier of deadline and response target, fixed at submission (migration 130): the console queue's order. */
  due_at: string | null;
  /** The verified agent's key (RFC 7638 thumbprint) that submitted it (migration 295); NULL when unsigned. */
  agent_key_id: string | null;
  /** That agent's key directory host[:port] (migration 295); NULL when unsigned. */
  agent_directory: string | null;
  /** The receipt's leaf index in the public log (migration 260), set when the sequencer integrates it; NULL before. */
  receipt_log_index: number | null;
  /** The A2A contextId the service issued with the task, `ctx-<year>-<32 hex>` (migration 300, docs/a2a.md). */
  context_id: string;
  /** How many distinct operators must approve the deliverable, 1 to 5 (migration 320, docs/approvals.md). */
  approvals_required: number;
  /** Approvals of the current proposal, the proposer's included; 0 with nothing proposed. */
  approvals_given: number;
  /** The current proposal's round: each proposal opens the next one (the guard of every approval change). */
  approval_round: number;
  /** JSON of the proposal waiting for approvals (services/console/approvals.ts); NULL when none. */
  proposal: string | null;
  /** JSON {by, at, reason} of the last send-back; NULL when none (cleared by the next proposal). */
  approval_returned: string | null;
}

/** One approval of one proposal round (migration 320). */
export interface TaskApprovalsTable {
  task_id: string;
  round: number;
  /** The operator_id, or "owner" for ADMIN_KEY. */
  approver: string;
  at: string;
  /** RFC 7638 thumbprint of the passkey that signed; NULL for an unsigned approval. */
  key_id: string | null;
  /** JSON {authenticator_data, client_data_json, signature} (base64url); NULL when unsigned. */
  attestation: string | null;
  /** SHA-256 (hex) of the assertion's signature: an assertion counts once. */
  assertion_sha256: string | null;
}

export interface MessagesTable {
  id: string;
  message: string;
  reply_to: string;
  sender: string | null;
  subject: string | null;
  client_hash: string;
  /** JSON array of task ids the message names. */
  task_ids: string;
  email_unverified: number;
  created_at: string;
  /** When retention erased the text and addresses (migration 100). */
  erased_at: string | null;
  /** SHA-256 (hex) of the thread token that reads the operator's replies (migration 130). */
  thread_token_hash: string | null;
  /** When an operator answered it or marked it done; null while it waits (migration 200). */
  done_at: string | null;
  /** Who: the operator's name, or `reply` for messages answered before migration 200. */
  done_by: string | null;
}

/** Fixed-window counters for rate limits, daily caps and refusal counts. */
export interface CountersTable {
  key: string;
  count: number;
  expires_at: string;
}

export interface IdempotencyKeysTable {
  client_hash: string;
  key: string;
  request_hash: string;
  status_code: number;
  location: string | null;
  body: string;
  task_id: string | null;
  created_at: string;
  expires_at: string;
}

export interface BlocklistTable {
  id: string;
  kind: string;
  value: string;
  reason: string | null;
  source: string;
  created_at: string;
  expires_at: string | null;
  /** ip entries: null for one client, the network's bits otherwise, -1 unknown (stored before migration 240). */
  prefix_bits: number | null;
}

export interface OutboxTable {
  id: string;
  kind: string;
  recipient: string;
  reply_to: string | null;
  subject: string;
  text_body: string;
  html_body: string | null;
  task_id: string | null;
  message_id: string | null;
  status: string;
  attempts: number;
  next_attempt_at: string;
  locked_until: string | null;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  /** The worker run holding the lease (migration 030). */
  claim_token: string | null;
  /** The Message-ID this mail answers, for In-Reply-To and References (migration 080). */
  in_reply_to: string | null;
  /** Claimed before higher ranks: 0 requester mail, 1 operator notifications (migration 230). */
  claim_rank: number;
}

export interface SigningKeysTable {
  kid: string;
  public_jwk: string;
  private_jwk: string;
  created_at: string;
  retired_at: string | null;
  /** 'active' on the one key that signs (unique), NULL once retired (migration 020). */
  active_slot: string | null;
}

/** The operator's replies to messages (migration 080). */
export interface MessageRepliesTable {
  id: string;
  message_id: string;
  body: string;
  created_at: string;
}

/** Browsers subscribed to Web Push notifications (migration 081). */
export interface PushSubscriptionsTable {
  id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  created_at: string;
  last_error: string | null;
  /** The operator whose session subscribed (migration 190); null: the owner's, or from before teams. */
  operator_id: string | null;
}

/** One row per task or message already announced by push (migration 081). */
export interface PushNoticesTable {
  key: string;
  created_at: string;
}

/** Console sessions signed out before their cookie expires. */
export interface RevokedSessionsTable {
  sid: string;
  expires_at: string;
}

/** The health record's write probe: one row (migration 090). */
export interface StoreProbeTable {
  id: number;
  at: string;
}

/** One stored file content, by its SHA-256 (migration 070). */
export interface AttachmentBlobsTable {
  sha256: string;
  size: number;
  /** Bytes per chunk row (every chunk but the last is exactly this long). */
  chunk_bytes: number;
  created_at: string;
}

export interface AttachmentChunksTable {
  /** The blob's SHA-256, or a temporary `upload-…` key while an upload streams in. */
  blob_key: string;
  seq: number;
  data: Buffer;
}

/** A file attached to a task by the operator. */
export interface AttachmentsTable {
  id: string;
  task_id: string;
  name: string;
  media_type: string;
  size: number;
  sha256: string;
  /** A small WebP preview of an image, itself a blob. */
  thumbnail_sha256: string | null;
  /** 1 when image metadata was kept (location_required tasks). */
  metadata_kept: number;
  /** Order within the task: the order files were attached in. */
  position: number;
  created_at: string;
}

/** One webhook event (migration 065): the body is fixed when the change commits, signed per attempt. */
export interface WebhookOutboxTable {
  /** evt-<year>-<32 hex>: the webhook-id header, the same on every retry. */
  id: string;
  task_id: string;
  /** task.accepted, task.delivered or task.rejected. */
  event: string;
  url: string;
  /** The raw JSON body sent on every attempt. */
  body: string;
  /** pending, delivered, failed (attempts exhausted) or gone (the receiver answered 410). */
  status: string;
  attempts: number;
  next_attempt_at: string;
  locked_until: string | null;
  claim_token: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  /** The A2A push notification config this row notifies (a2a_push_configs.id of the same task); null for the task's callback_url events. */
  push_config_id: string | null;
}

/** An A2A push notification config of a task (migration 310; services/a2a/push-configs.ts). */
export interface A2APushConfigsTable {
  task_id: string;
  /** The client's id, or one the service generated. */
  id: string;
  url: string;
  /** Sent as X-A2A-Notification-Token. */
  token: string | null;
  /** AuthenticationInfo.scheme / .credentials; a Bearer credential is sent as Authorization. */
  auth_scheme: string | null;
  auth_credentials: string | null;
  created_at: string;
}

/** One delivery attempt of a webhook event, for the operator's view. */
export interface WebhookAttemptsTable {
  event_id: string;
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/**
 * Task counts kept in the transaction of each change (migration 150), per status within a scope:
 * `all`, a creation day `YYYY-MM-DD`, or `unseen`. See task-counts-repo.ts.
 */
export interface TaskCountsTable {
  scope: string;
  status: string;
  count: number;
}

/**
 * Coverage histograms (migration 280, store/tasks/coverage-repo.ts): per UTC day of the event, task type,
 * measure and bucket, the samples of the window's days; `coverage_window` holds their sum over the
 * window, one histogram per task type and measure, which is what a read reads.
 */
export interface CoverageDaysTable {
  day: string;
  task_type: string;
  measure: string;
  bucket: number;
  count: number;
}

export interface CoverageWindowTable {
  task_type: string;
  measure: string;
  /** The histogram's samples. */
  total: number;
  /** JSON `[[bucket, count], …]` by bucket (coverage-repo.ts Buckets). */
  buckets: string;
}

/** Kept message counts (migration 200): scope `waiting`, the messages no operator has answered or marked done. */
export interface MessageCountsTable {
  scope: string;
  count: number;
}

/** Which message names which task (migration 150): the task page's messages by index. */
export interface MessageTasksTable {
  task_id: string;
  message_id: string;
  /** The message's created_at, so a task's messages come newest first from the key itself. */
  created_at: string;
}

export interface SettingsTable {
  key: string;
  value: string;
}

/** A team of operators (migration 140, docs/team.md). */
export interface OperatorsTable {
  id: string;
  name: string;
  /** Lower case. */
  email: string;
  role: string;
  disabled: number;
  on_duty: number;
  created_at: string;
  updated_at: string;
}

export interface OperatorKeysTable {
  id: string;
  operator_id: string;
  /** SHA-256 hex of the key; the key itself is shown once and never stored. */
  key_hash: string;
  created_at: string;
  revoked_at: string | null;
}

export interface OperatorInvitesTable {
  /** SHA-256 hex of the invite token. */
  token_hash: string;
  operator_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface OperatorPasskeysTable {
  /** base64url. */
  credential_id: string;
  operator_id: string;
  /** base64url of the COSE public key. */
  public_key: string;
  counter: number;
  /** JSON array of transports. */
  transports: string;
  created_at: string;
  /** When it was removed (migration 280): it no longer signs in, and the sessions it opened end. */
  removed_at: string | null;
}

export interface WebauthnChallengesTable {
  id: string;
  challenge: string;
  expires_at: string;
}

/** Append-only: rows are inserted in the transaction of the action they record, never updated or deleted. */
export interface AuditLogTable {
  id: string;
  at: string;
  /** An operator_id, or "owner" (ADMIN_KEY), or "anonymous" for a failed sign-in naming nobody. */
  actor: string;
  action: string;
  task_id: string | null;
  /** JSON object. */
  details: string;
  /** The entry's link in the hash chain (domain/team/audit-chain.ts, migration 260); NULL until the sequencer chains it. */
  hash: string | null;
  /** Its place in the chain, from 0; NULL until chained. */
  chain_index: number | null;
}

/** Failed sign-ins per client address hash or per operator, in one-minute windows, shared by every instance. */
export interface SigninFailuresTable {
  key: string;
  window_start: string;
  count: number;
}

/** Who a task is assigned to: one row per assigned task (none when unassigned). */
export interface TaskAssignmentsTable {
  task_id: string;
  operator_id: string;
  assigned_at: string;
}

/** Open tasks assigned to each operator (migration 190), kept with every assignment and status change. */
export interface AssignmentCountsTable {
  operator_id: string;
  open_tasks: number;
}

export interface Database {
  tasks: TasksTable;
  messages: MessagesTable;
  counters: CountersTable;
  idempotency_keys: IdempotencyKeysTable;
  blocklist: BlocklistTable;
  outbox: OutboxTable;
  signing_keys: SigningKeysTable;
  settings: SettingsTable;
  revoked_sessions: RevokedSessionsTable;
  message_replies: MessageRepliesTable;
  push_subscriptions: PushSubscriptionsTable;
  push_notices: PushNoticesTable;
  store_probe: StoreProbeTable;
  attachment_blobs: AttachmentBlobsTable;
  attachment_chunks: AttachmentChunksTable;
  attachments: AttachmentsTable;
  webhook_outbox: WebhookOutboxTable;
  a2a_push_configs: A2APushConfigsTable;
  webhook_attempts: WebhookAttemptsTable;
  task_counts: TaskCountsTable;
  coverage_days: CoverageDaysTable;
  coverage_window: CoverageWindowTable;
  message_tasks: MessageTasksTable;
  message_counts: MessageCountsTable;
  imported_task_ids: ImportedTaskIdsTable;
  operators: OperatorsTable;
  operator_keys: OperatorKeysTable;
  operator_invites: OperatorInvitesTable;
  operator_passkeys: OperatorPasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  audit_log: AuditLogTable;
  signin_failures: SigninFailuresTable;
  task_assignments: TaskAssignmentsTable;
  assignment_counts: AssignmentCountsTable;
  task_snoozes: TaskSnoozesTable;
  held_actions: HeldActionsTable;
  reply_templates: ReplyTemplatesTable;
  log_leaves: LogLeavesTable;
  log_nodes: LogNodesTable;
  log_checkpoints: LogCheckpointsTable;
  agent_nonces: AgentNoncesTable;
  task_approvals: TaskApprovalsTable;
}

/**
 * A leaf of the public receipt log (migration 260): written with the receipt it carries, waiting
 * (`leaf_index` NULL) until the sequencer gives it its place.
 */
export interface LogLeavesTable {
  id: string;
  /** The task whose receipt this is; NULL for other kinds of leaf. */
  task_id: string | null;
  /** The leaf's data: a compact JWS. */
  data: string;
  created_at: string;
  leaf_index: number | null;
}

/**
 * A complete subtree of the log (migration 260): the RFC 9162 hash of leaves
 * [index * 2^level, (index + 1) * 2^level), base64. Level 0 holds the leaf hashes; the hashes of a
 * tlog-tiles tile at tile level L are the nodes of level 8L.
 */
export interface LogNodesTable {
  level: number;
  idx: number;
  hash: string;
}

/** A signed checkpoint of the log (migration 260), one per integration. */
export interface LogCheckpointsTable {
  /** 0, 1, 2, …: the latest is the greatest (a new audit head may sign a tree of the same size again). */
  seq: number;
  size: number;
  /** base64 root hash. */
  root: string;
  /** The whole signed note as served at /log/checkpoint. */
  note: string;
  /** Its RFC 3161 TimeStampResp, base64 (migration 290); NULL until time-stamped (TSA_URL). */
  tsr: string | null;
  created_at: string;
}

/** Web Bot Auth signature nonces seen, until their window ends (migration 295). */
export interface AgentNoncesTable {
  /** Hash of the key id and the nonce. */
  nonce: string;
  expires_at: string;
}

/** Imported task ids by case-folded form (migration 180), for linking messages that name them. */
export interface ImportedTaskIdsTable {
  folded_id: string;
  task_id: string;
}

// Generated is re-exported for migrations that add auto columns later.
export type { Generated };

/** A task hidden from the default inbox until `until` (migration 210). */
export interface TaskSnoozesTable {
  task_id: string;
  until: string;
  created_at: string;
}

/** A console action held for the undo window, committed when `commit_at` passes (migration 210). */
export interface HeldActionsTable {
  id: string;
  task_id: string;
  kind: string;
  /** JSON: the service call's input. */
  payload: string;
  /** JSON: the actor who acted. */
  actor: string;
  created_at: string;
  commit_at: string;
}

/** A canned reply (`reply`) or delivery template (`result`) the operator uses (migration 210). */
export interface ReplyTemplatesTable {
  id: string;
  kind: string;
  name: string;
  body: string;
  created_at: string;
  updated_at: string;
}
