import { createHash } from 'node:crypto';
import { randomHex } from '../domain/ids.js';
import type { Question } from '../domain/questions/questions.js';
import { iso } from '../domain/time.js';
import { afterCommit, type Db, whenCommitted } from '../store/db.js';
import { insertOutbox, type OutboxRow } from '../store/delivery/outbox-repo.js';
import type { MessageRow } from '../store/messages/messages-repo.js';
import { type TaskRow, taskSummaries } from '../store/tasks/tasks-repo.js';
import { alertAudience, messageAlertTask, namedTaskIds } from './alert-audience.js';
import type { MailDeps } from './context.js';
import { claimRank } from './priority.js';
import { bodyText, headerText, isSafeAddress } from './sanitize.js';
import type { MailParts } from './templates/layout.js';
import { type LinkedTask, messageReceivedMail, taskSubmittedMail } from './templates/operator.js';
import { deadlinePassedMail, questionAnsweredMail, questionAskedMail } from './templates/questions.js';
import { messageReplyMail } from './templates/reply.js';
import { duplicateNoticeMail, taskAcceptedMail, taskDeliveredMail, taskRejectedMail } from './templates/requester.js';

/**
 * The transactional outbox: each function writes mail rows in the caller's transaction, so a
 * change and the mail it causes commit together (or not at all). The mail worker (services/delivery/mail-worker.ts) sends
 * them later, from any instance.
 */

export type MailKind =
  | 'task_submitted'
  | 'message_received'
  | 'message_reply'
  | 'task_accepted'
  | 'task_delivered'
  | 'task_rejected'
  | 'duplicate_notice'
  | 'task_question'
  | 'question_answered'
  | 'deadline_passed';

interface NewMail {
  /** Set for mails that must exist at most once (one acceptance mail per task, …). */
  id?: string;
  kind: MailKind;
  recipient: string | null | undefined;
  replyTo?: string | null | undefined;
  parts: MailParts;
  taskId?: string;
  messageId?: string;
  /** The Message-ID this mail answers (threads a reply under the message). */
  inReplyTo?: string;
}

/** The outbox row of a mail, or undefined when its recipient is not a plain address. */
function outboxRow(deps: MailDeps, mail: NewMail): OutboxRow | undefined {
  if (!isSafeAddress(mail.recipient)) {
    // Only validated, plain addresses become recipients; anything else is a bug or an attack.
    deps.log.warn({ kind: mail.kind, task_id: mail.taskId, message_id: mail.messageId }, 'outbox: recipient is not a plain e-mail address; mail not queued');
    return undefined;
  }
  const now = iso(deps.clock.now());
  return {
    id: mail.id ?? `mail-${randomHex(16)}`,
    kind: mail.kind,
    recipient: mail.recipient,
    reply_to: isSafeAddress(mail.replyTo) ? mail.replyTo : null,
    subject: headerText(mail.parts.subject),
    text_body: bodyText(mail.parts.text),
    html_body: bodyText(mail.parts.html),
    task_id: mail.taskId ?? null,
    message_id: mail.messageId ?? null,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    locked_until: null,
    last_error: null,
    created_at: now,
    sent_at: null,
    in_reply_to: mail.inReplyTo ?? null,
    claim_rank: claimRank(mail.kind),
    claim_token: null,
  };
}

/**
 * Writes the mails' rows in the caller's transaction (one statement). With a worker running here,
 * the rows are written under its claim and handed to it once the transaction has committed
 * (mail/wake.ts); otherwise the worker is woken to look for them.
 */
async function enqueue(db: Db, deps: MailDeps, mails: NewMail[]): Promise<void> {
  const rows = mails.map((mail) => outboxRow(deps, mail)).filter((row) => row !== undefined);
  if (rows.length === 0) return;
  deps.log.debug({ kinds: [...new Set(rows.map((r) => r.kind))], count: rows.length }, 'outbox: mail queued');
  const onCommit = afterCommit(db);
  const adopter = deps.outboxWake.adopter;
  const claim = onCommit && adopter?.claim();
  if (adopter && claim && onCommit) {
    const claimed = rows.map((row) => ({ ...row, ...claim }));
    const written = await insertOutbox(db, claimed);
    // A row whose id was already queued was not written: that one is not this claim's to send.
    const mine = claimed.filter((row) => written.has(row.id));
    if (mine.length > 0) onCommit(() => adopter.take(mine));
    return;
  }
  await insertOutbox(db, rows, { ids: false });
  whenCommitted(db, () => deps.outboxWake.wake());
}

/** One id per (task, kind): a transition mail is never queued twice for the same task. */
function onceId(taskId: string, kind: MailKind): string {
  return `mail-${createHash('sha256').update(`${taskId}\n${kind}`).digest('hex').slice(0, 32)}`;
}

/**
 * The addresses of an alert about `taskId` (alert-audience.ts: the assignee, else every operator on
 * duty, else OPERATOR_EMAIL). Each has a key for the mail's once-only id (none for OPERATOR_EMAIL,
 * as before teams).
 */
async function alertRecipients(db: Db, deps: MailDeps, taskId: string | undefined): Promise<{ email: string; key: string | undefined }[]> {
  const audience = await alertAudience(db, taskId);
  if (audience.kind === 'operators') return audience.operators.map((op) => ({ email: op.email, key: op.id }));
  return deps.config.operatorEmail === undefined ? [] : [{ email: deps.config.operatorEmail, key: undefined }];
}

/** To whoever is alerted (alertRecipients): a new task. Reply-To is the requester, so the operator can ask back. */
export async function enqueueTaskSubmitted(db: Db, deps: MailDeps, tasks: TaskRow[]): Promise<void> {
  // A new task has no assignee yet: every operator on duty, or OPERATOR_EMAIL.
  const recipients = await alertRecipients(db, deps, undefined);
  if (recipients.length === 0) return;
  await enqueue(
    db,
    deps,
    tasks.flatMap((task) =>
      recipients.map((to) => ({
        id: onceId(to.key ? `${task.id}\n${to.key}` : task.id, 'task_submitted'),
        kind: 'task_submitted' as const,
        recipient: to.email,
        replyTo: task.contact_email,
        parts: taskSubmittedMail(deps.config.baseUrl, task),
        taskId: task.id,
      })),
    ),
  );
}

/** To whoever is alerted (alertRecipients): a new message, Reply-To the sender, with the tasks it names. */
export async function enqueueMessageReceived(db: Db, deps: MailDeps, message: MessageRow): Promise<void> {
  const ids = namedTaskIds(message);
  // A message naming one task goes to that task's assignee, if it has one.
  const recipients = await alertRecipients(db, deps, messageAlertTask(message));
  if (recipients.length === 0) return;
  const found = await taskSummaries(db, ids);
  const linked: LinkedTask[] = ids.map((id) => {
    const task = found.find((t) => t.id === id);
    return task ? { id, task: { task_type: task.task_type, status: task.status } } : { id };
  });
  await enqueue(
    db,
    deps,
    recipients.map((to) => ({
      kind: 'message_received' as const,
      recipient: to.email,
      replyTo: message.reply_to,
      parts: messageReceivedMail(deps.config.baseUrl, message, linked),
      messageId: message.id,
      ...(found.length === 1 && found[0] ? { taskId: found[0].id } : {}),
    })),
  );
}

/**
 * The Message-ID a message stands for in mail threads. A message arrives over HTTP, not by mail,
 * so it has none of its own: every reply names this one, and the requester's mail client files
 * all replies to one message under one thread.
 */
export function messageThreadId(mailFrom: string, messageId: string): string {
  return `<${messageId}@${mailFrom.slice(mailFrom.lastIndexOf('@') + 1)}>`;
}

/** To the message's reply_to: the operator's answer, threaded under the message. */
export async function enqueueMessageReply(db: Db, deps: MailDeps, message: MessageRow, replyId: string, reply: string): Promise<string> {
  const id = `mail-${createHash('sha256').update(`${replyId}\nmessage_reply`).digest('hex').slice(0, 32)}`;
  const ids = namedTaskIds(message);
  await enqueue(db, deps, [
    {
      id,
      kind: 'message_reply',
      recipient: message.reply_to,
      parts: messageReplyMail(deps.config.baseUrl, message, reply, ids),
      messageId: message.id,
      inReplyTo: messageThreadId(deps.config.mailFrom, message.id),
      ...(ids.length === 1 && ids[0] ? { taskId: ids[0] } : {}),
    },
  ]);
  return id;
}

const TRANSITION_MAILS = {
  accepted: { kind: 'task_accepted', build: taskAcceptedMail },
  delivered: { kind: 'task_delivered', build: taskDeliveredMail },
  rejected: { kind: 'task_rejected', build: taskRejectedMail },
} as const satisfies Record<string, { kind: MailKind; build: (baseUrl: string, task: TaskRow) => MailParts }>;

/**
 * To the requester: the task was accepted, delivered or rejected. Called with the updated row in
 * the transaction that changed it. None for `status_poll` tasks, and at most one per status.
 */
export async function enqueueTaskTransition(db: Db, deps: MailDeps, task: TaskRow): Promise<void> {
  if (task.delivery === 'status_poll' || task.contact_email === null) return;
  const mail = Object.hasOwn(TRANSITION_MAILS, task.status) ? TRANSITION_MAILS[task.status as keyof typeof TRANSITION_MAILS] : undefined;
  if (mail === undefined) return;
  await enqueue(db, deps, [
    {
      id: onceId(task.id, mail.kind),
      kind: mail.kind,
      recipient: task.contact_email,
      parts: mail.build(deps.config.baseUrl, task),
      taskId: task.id,
    },
  ]);
}

/**
 * To the contact address of an existing task, when another client resubmitted the same task for
 * that address (contract: "Duplicates across clients"): the id goes to whoever owns the mailbox,
 * not to whoever knew the address. At most one such mail per task per UTC day, so resubmitting
 * cannot be used to flood a mailbox.
 */
export async function enqueueDuplicateNotice(db: Db, deps: MailDeps, duplicate: { taskId: string; contactEmail: string | null }): Promise<void> {
  if (duplicate.contactEmail === null) return;
  const day = iso(deps.clock.now()).slice(0, 10);
  await enqueue(db, deps, [
    {
      id: onceId(`${duplicate.taskId}\n${day}`, 'duplicate_notice'),
      kind: 'duplicate_notice',
      recipient: duplicate.contactEmail,
      parts: duplicateNoticeMail(deps.config.baseUrl, duplicate.taskId),
      taskId: duplicate.taskId,
    },
  ]);
}

/** To the requester of an `email` task: the operator asked a question (once per question). */
export async function enqueueQuestionAsked(db: Db, deps: MailDeps, task: TaskRow, question: Question): Promise<void> {
  if (task.delivery !== 'email' || task.contact_email === null) return;
  await enqueue(db, deps, [
    {
      id: onceId(question.question_id, 'task_question'),
      kind: 'task_question',
      recipient: task.contact_email,
      parts: questionAskedMail(deps.config.baseUrl, task, question),
      taskId: task.id,
    },
  ]);
}

/** To whoever is alerted about the task (its assignee, …), once per `onceKey` and recipient. */
async function enqueueOperatorNotice(db: Db, deps: MailDeps, task: TaskRow, kind: MailKind, onceKey: string, parts: MailParts): Promise<void> {
  const recipients = await alertRecipients(db, deps, task.id);
  await enqueue(
    db,
    deps,
    recipients.map((to) => ({ id: onceId(to.key ? `${onceKey}\n${to.key}` : onceKey, kind), kind, recipient: to.email, parts, taskId: task.id })),
  );
}

/** To whoever is alerted about the task: the requester answered a question. */
export async function enqueueQuestionAnswered(db: Db, deps: MailDeps, task: TaskRow, question: Question): Promise<void> {
  await enqueueOperatorNotice(db, deps, task, 'question_answered', question.question_id, questionAnsweredMail(deps.config.baseUrl, task, question));
}

/** To whoever is alerted about the task: an accepted task's deadline passed undelivered (once per task). */
export async function enqueueDeadlinePassed(db: Db, deps: MailDeps, task: TaskRow): Promise<void> {
  await enqueueOperatorNotice(db, deps, task, 'deadline_passed', task.id, deadlinePassedMail(deps.config.baseUrl, task));
}
