import { openQuestion } from '../../domain/questions/questions.js';
import type { PublicTask } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { answerQuestion } from '../../services/questions/questions.js';

/**
 * The one seam between the MCP tasks extension (2026-07-28: `input_required`, `tasks/update`) and
 * the operator's questions (the public task's `questions`, services/questions/questions.ts): tasks/get
 * reports the open question as its input request, and tasks/update answers it through the same
 * service function as REST and the answer_operator_question tool.
 */

export interface OpenQuestion {
  questionId: string;
  question: string;
}

/** The operator's unanswered question on this task, or null. */
export function openQuestionOf(task: Readonly<PublicTask>): OpenQuestion | null {
  const open = openQuestion(task.questions);
  return open ? { questionId: open.question_id, question: open.question } : null;
}

/** Records the requester's answer to the task's open question (throws the service's errors). */
export async function answerOpenQuestion(deps: ServiceDeps, taskId: string, questionId: string, answer: string): Promise<void> {
  await answerQuestion(deps, { taskId, questionId, answer });
}
