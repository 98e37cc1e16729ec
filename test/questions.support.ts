import { expect } from 'vitest';
import { ADMIN, type Json } from './operator.support.js';
import { postJson, type TestApp } from './support/app.js';

/** Helpers of the question suites (issue 25). */

export interface AskedQuestion {
  question_id: string;
  question: string;
  asked_at: string;
}

export function askRaw(t: TestApp, taskId: string, body: unknown, headers: Record<string, string> = ADMIN): Promise<Response> {
  return postJson(`${t.url}/api/v1/admin/tasks/${encodeURIComponent(taskId)}/questions`, body, headers);
}

/** The operator asks; must succeed (201). */
export async function ask(t: TestApp, taskId: string, question = 'Which entrance should I use, the front or the side?'): Promise<AskedQuestion> {
  const res = await askRaw(t, taskId, { question });
  if (res.status !== 201) throw new Error(`asking failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as AskedQuestion;
}

export function answerRaw(t: TestApp, taskId: string, questionId: string, body: unknown): Promise<Response> {
  return postJson(`${t.url}/api/v1/tasks/${encodeURIComponent(taskId)}/questions/${encodeURIComponent(questionId)}/answer`, body);
}

/** The requester answers; must succeed (200 with the public task). */
export async function answer(t: TestApp, taskId: string, questionId: string, text = 'The side entrance, please.'): Promise<Json> {
  const res = await answerRaw(t, taskId, questionId, { answer: text });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Json;
}

export async function publicTask(t: TestApp, taskId: string): Promise<Json> {
  const res = await fetch(`${t.url}/api/v1/tasks/${taskId}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Json;
}
