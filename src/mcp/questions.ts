import Type from 'typebox';
import { ANSWER_MAX, ANSWER_MIN, openQuestion } from '../domain/questions/questions.js';

export { AWAITING_ANSWER_GUIDE } from '../domain/questions/questions.js';

import type { PublicTask } from '../domain/tasks/schemas.js';

/**
 * The MCP side of questions (docs/questions.md): the answer tool's input, and the sentences that tell an
 * agent to look for awaiting_answer and how to answer (tool descriptions, instructions, card).
 */

export const answerToolInput = Type.Object({
  task_id: Type.String({ maxLength: 200, description: 'The task_id the question belongs to.' }),
  question_id: Type.String({ maxLength: 200, description: 'The question_id of the open question (q-<year>-<32 hex>), from questions in check_task_status.' }),
  answer: Type.String({ minLength: ANSWER_MIN, maxLength: ANSWER_MAX, description: 'Your answer to the question.' }),
});

/** The line check_task_status adds when a question awaits an answer, or undefined. */
export function awaitingNote(task: Pick<PublicTask, 'task_id' | 'questions'>): string | undefined {
  const open = openQuestion(task.questions);
  if (!open) return undefined;
  return (
    `The operator asked a question and waits for your answer: "${open.question}" — answer it with answer_operator_question ` +
    `{task_id: "${task.task_id}", question_id: "${open.question_id}", answer: "..."}.`
  );
}

export const threadToolInput = Type.Object({
  message_id: Type.String({ maxLength: 200, description: 'The message_id message_human_operator returned.' }),
  thread_token: Type.String({ maxLength: 100, description: 'The thread_token message_human_operator returned (mt_...).' }),
});
