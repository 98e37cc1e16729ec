import Type, { type Static, type TSchema } from 'typebox';
import { randomHex } from '../ids.js';

/**
 * Questions from the operator, answers from the requester (contract "Questions from the operator,
 * answers from the requester"): the payloads and the pure rules. A task keeps its questions as a
 * JSON array on its row, so the public task is still one row and one read.
 */

export const QUESTION_MIN = 5;
export const QUESTION_MAX = 2000;
export const ANSWER_MIN = 1;
export const ANSWER_MAX = 5000;

/** `q-<UTC year>-<32 lowercase hex>`. */
export function newQuestionId(now: Date): string {
  return `q-${now.getUTCFullYear()}-${randomHex(16)}`;
}

/** The two sentences every document and tool description repeats: look for awaiting_answer, and how to answer. */
export const AWAITING_ANSWER_GUIDE =
  'When awaiting_answer is true, the operator asked a question (in questions, with answer null) and the work waits for you: ' +
  'answer it with answer_operator_question {task_id, question_id, answer} (REST: POST /api/v1/tasks/{task_id}/questions/{question_id}/answer).';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const QuestionSchema = Type.Object(
  {
    question_id: Type.String({ description: 'q-<year>-<32 hex>' }),
    question: Type.String({ description: 'What the operator asks.' }),
    asked_at: Type.String({ format: 'date-time' }),
    answer: Nullable(Type.String({ description: "The requester's answer; null until answered." })),
    answered_at: Nullable(Type.String({ format: 'date-time', description: 'null until answered.' })),
  },
  { description: 'A question the operator asked about the task, with its answer once given.' },
);
export type Question = Static<typeof QuestionSchema>;

export const QuestionInputSchema = Type.Object(
  { question: Type.String({ minLength: QUESTION_MIN, maxLength: QUESTION_MAX, description: 'What the operator needs to know to do the task.' }) },
  { additionalProperties: false, description: "The operator's question on an open task." },
);
export type QuestionInput = Static<typeof QuestionInputSchema>;

/** 201 of asking: the new question. */
export const AskedQuestionSchema = Type.Object(
  { question_id: Type.String({ description: 'q-<year>-<32 hex>' }), question: Type.String(), asked_at: Type.String({ format: 'date-time' }) },
  { description: 'The question, as the public task now lists it.' },
);
export type AskedQuestion = Static<typeof AskedQuestionSchema>;

export const AnswerInputSchema = Type.Object(
  { answer: Type.String({ minLength: ANSWER_MIN, maxLength: ANSWER_MAX, description: "The requester's answer to the operator's question." }) },
  { description: 'An answer to one question; each question takes one answer.' },
);
export type AnswerInput = Static<typeof AnswerInputSchema>;

/** The stored array (null on tasks that never had a question). */
export function parseQuestions(stored: string | null): Question[] {
  return stored === null ? [] : (JSON.parse(stored) as Question[]);
}

export function isAwaitingAnswer(questions: readonly Question[]): boolean {
  return questions.some((q) => q.answer === null);
}

/** The oldest question still without an answer: the one an agent is asked to answer first. */
export function openQuestion(questions: readonly Question[]): Question | undefined {
  return questions.find((q) => q.answer === null);
}

/** Line breaks as mail and forms carry them (LF); a blank text counts as empty. */
export function normalizedText(text: string): string {
  const lf = text.replace(/\r\n?/g, '\n');
  return lf.trim() === '' ? '' : lf;
}
