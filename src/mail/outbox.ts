import type { Db } from '../store/db.js';
import type { MessageRow } from '../store/messages-repo.js';
import type { TaskRow } from '../store/tasks-repo.js';
import type { ServiceDeps } from '../services/deps.js';

/**
 * The transactional outbox: each function writes mail rows in the caller's transaction, so a
 * change and the mail it causes commit together. Foundation stubs; issue "E-mail that never loses
 * a message" fills them in and adds the worker.
 */

/** To OPERATOR_EMAIL: a new task. */
export async function enqueueTaskSubmitted(_db: Db, _deps: ServiceDeps, _task: TaskRow): Promise<void> {}

/** To OPERATOR_EMAIL: a new message (Reply-To the sender). */
export async function enqueueMessageReceived(_db: Db, _deps: ServiceDeps, _message: MessageRow): Promise<void> {}

/** To the requester: the task was accepted, delivered or rejected (none for status_poll). */
export async function enqueueTaskTransition(_db: Db, _deps: ServiceDeps, _task: TaskRow): Promise<void> {}
