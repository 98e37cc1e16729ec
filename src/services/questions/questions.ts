import { AppError, validationFailed } from '../../domain/errors.js';
import { ANY_TASK_ID_PATTERN } from '../../domain/ids.js';
import {
  type AnswerInput,
  AnswerInputSchema,
  type AskedQuestion,
  newQuestionId,
  normalizedText,
  parseQuestions,
  type Question,
  type QuestionInput,
  QuestionInputSchema,
} from '../../domain/questions/questions.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import { isFinal, type TaskStatus } from '../../domain/tasks/task.js';
import type { Actor } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import * as outbox from '../../mail/outbox.js';
import { type Db, withTransaction } from '../../store/db.js';
import { findTask, lockTask, type TaskRow, toPublicTask, updateTask } from '../../store/tasks/tasks-repo.js';
import { enqueuePushNotifications } from '../a2a/push-configs.js';
import type { ServiceDeps } from '../context.js';
import { enqueueTaskEvent } from '../delivery/webhooks.js';
import { schemaChecker } from '../tasks/validation.js';
import { recordAudit } from '../team/audit.js';

/**
 * Questions from the operator, answers from the requester (contract, "Additions, part 2"). One
 * function each for every door: the admin API and the console ask; REST, MCP and the status page
 * answer. Each change takes the task's row lock (PostgreSQL; SQLite runs one transaction at a time)
 * and commits with its change-feed note, webhook event and mail, so two racing answers to one
 * question cannot both win, on any instance.
 */

// The operator's typo must not pass silently; an agent's extra fields are ignored (nowhere to warn).
const checkQuestion = schemaChecker<QuestionInput>(QuestionInputSchema, { unknown: 'refuse', notAnObject: 'body must be a JSON object: {question}' });
const checkAnswer = schemaChecker<AnswerInput>(AnswerInputSchema, { unknown: 'ignore', notAnObject: 'body must be a JSON object: {answer}' });

/** A text field with line breaks as LF and a blank text as empty (refused by minLength). */
function normalizedField(raw: unknown, field: string): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !(field in raw)) return raw;
  const value = (raw as Record<string, unknown>)[field];
  return typeof value === 'string' ? { ...raw, [field]: normalizedText(value) } : raw;
}

function taskNotFound(taskId: string): AppError {
  return new AppError('task_not_found', `No task has the id "${taskId.slice(0, 80)}". Check the task_id returned at submission.`);
}

/** The task, locked for the rest of the transaction. */
async function lockedTask(trx: Db, deps: ServiceDeps, taskId: string): Promise<TaskRow> {
  if (!ANY_TASK_ID_PATTERN.test(taskId)) throw taskNotFound(taskId);
  await lockTask(trx, deps.store.dialect, taskId);
  const task = await findTask(trx, taskId);
  if (!task) throw taskNotFound(taskId);
  return task;
}

/** The operator asks on an open task (201 `{question_id, question, asked_at}`); a final task is 409. */
export async function askQuestion(deps: ServiceDeps, actor: Actor, taskId: string, raw: unknown): Promise<AskedQuestion> {
  const { value, fieldErrors } = checkQuestion(normalizedField(raw, 'question'));
  if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
  const now = deps.clock.now();
  const at = iso(now);
  const question: Question = { question_id: newQuestionId(now), question: value.question, asked_at: at, answer: null, answered_at: null };
  await withTransaction(deps.store.db, async (trx) => {
    const current = await lockedTask(trx, deps, taskId);
    if (isFinal(current.status as TaskStatus)) {
      throw new AppError('invalid_transition', `The task is ${current.status}, which is final: no question can be asked on it.`, {
        from: current.status,
        to: current.status,
      });
    }
    const changes: Partial<TaskRow> = { questions: JSON.stringify([...parseQuestions(current.questions), question]), updated_at: at };
    // Asking implies the operator has seen the task.
    if (current.seen_by_operator_at === null) changes.seen_by_operator_at = at;
    await updateTask(trx, taskId, changes);
    const next: TaskRow = { ...current, ...changes };
    await enqueueTaskEvent(trx, deps, next, 'task.question');
    await outbox.enqueueQuestionAsked(trx, deps, next, question);
    await recordAudit(trx, deps, { actor, action: 'question.asked', taskId, details: { question_id: question.question_id } });
    await deps.changes.publish({ kind: 'task', taskId }, trx);
  });
  deps.log.info({ task_id: taskId, question_id: question.question_id }, 'operator asked a question');
  return { question_id: question.question_id, question: question.question, asked_at: question.asked_at };
}

/** The answer of a `{answer}` body: 400 for a body that is not an object, 422 naming `answer`. */
export function parseAnswerBody(raw: unknown): string {
  const { value, fieldErrors } = checkAnswer(normalizedField(raw, 'answer'));
  if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
  return value.answer;
}

export interface AnswerRequest {
  taskId: string;
  questionId: string;
  /** The answer as sent (validated here: 1–5000 characters). */
  answer: unknown;
}

/**
 * The requester answers one question (200 with the public task). Unknown task 404
 * `task_not_found`, unknown question 404 `question_not_found`, answered 409 `already_answered`.
 * No quota: the task id is the only credential, as for the status read.
 */
export async function answerQuestion(deps: ServiceDeps, request: AnswerRequest): Promise<PublicTask> {
  const answer = parseAnswerBody({ answer: request.answer });
  const { taskId, questionId } = request;
  const at = iso(deps.clock.now());
  const updated = await withTransaction(deps.store.db, async (trx) => {
    const current = await lockedTask(trx, deps, taskId);
    const questions = parseQuestions(current.questions);
    const index = questions.findIndex((q) => q.question_id === questionId);
    const asked = questions[index];
    if (!asked) throw new AppError('question_not_found', `Task ${taskId} has no question with the id "${questionId.slice(0, 80)}".`);
    if (asked.answer !== null) {
      throw new AppError('already_answered', `That question was answered at ${asked.answered_at ?? ''}; each question takes one answer.`);
    }
    const answered: Question = { ...asked, answer, answered_at: at };
    questions[index] = answered;
    const changes: Partial<TaskRow> = { questions: JSON.stringify(questions), updated_at: at };
    await updateTask(trx, taskId, changes);
    const next: TaskRow = { ...current, ...changes };
    await outbox.enqueueQuestionAnswered(trx, deps, next, answered);
    // The answer ends INPUT_REQUIRED for A2A (the callback_url has no event for it).
    await enqueuePushNotifications(trx, deps, next);
    await deps.changes.publish({ kind: 'task', taskId }, trx);
    return next;
  });
  deps.log.info({ task_id: taskId, question_id: questionId }, 'requester answered a question');
  return toPublicTask(updated);
}
