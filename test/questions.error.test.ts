import { describe, expect, it } from 'vitest';
import { type Json, submit, taskIn } from './operator.support.js';
import { answer, answerRaw, ask, askRaw, publicTask } from './questions.support.js';
import { STORES, useTestApp } from './support/app.js';

async function errorOf(res: Response): Promise<Json> {
  return (await res.json()) as Json;
}

describe.each(STORES)('questions refused on %s', (store) => {
  const t = useTestApp({ store });

  it('a question on a final task is 409 invalid_transition', async () => {
    for (const status of ['delivered', 'rejected']) {
      const id = await taskIn(t, status);
      const res = await askRaw(t, id, { question: 'Anything else you need?' });
      expect(res.status).toBe(409);
      expect(await errorOf(res)).toMatchObject({ error: 'invalid_transition', from: status });
    }
  });

  it('a question too short, too long, blank, missing or with unknown fields is 422 naming question; without the key 401', async () => {
    const id = await submit(t);
    for (const body of [{ question: 'Why' }, { question: 'x'.repeat(2001) }, { question: '      ' }, {}, { question: 'A fine question?', extra: 1 }]) {
      const res = await askRaw(t, id, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      const error = await errorOf(res);
      expect(error.error).toBe('validation_failed');
      expect(String((error.details as string[])[0])).toMatch(/question|extra/);
    }
    expect((await askRaw(t, id, [1, 2])).status).toBe(400);
    expect((await askRaw(t, id, { question: 'Which entrance please?' }, {})).status).toBe(401);
    expect((await askRaw(t, 'task-2030-00000000000000000000000000000000', { question: 'Which entrance please?' })).status).toBe(404);
    expect((await publicTask(t, id)).questions).toEqual([]);
  });

  it('an answer empty, blank or too long is 422 naming answer; a body that is not an object is 400', async () => {
    const id = await submit(t);
    const { question_id } = await ask(t, id);
    for (const body of [{ answer: '' }, { answer: '   \n ' }, { answer: 'x'.repeat(5001) }, {}, { answer: 42 }]) {
      const res = await answerRaw(t, id, question_id, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      const error = await errorOf(res);
      expect(error).toMatchObject({ error: 'validation_failed' });
      expect((error.details as string[])[0]).toMatch(/^answer /);
    }
    expect((await answerRaw(t, id, question_id, '"just text"')).status).toBe(400);
    expect((await answerRaw(t, id, question_id, 'not json')).status).toBe(400);
    expect((await publicTask(t, id)).awaiting_answer).toBe(true);
    // 5000 characters exactly is allowed.
    await answer(t, id, question_id, 'y'.repeat(5000));
  });

  it('an unknown question is 404 question_not_found, an unknown task 404 task_not_found, a second answer 409 already_answered', async () => {
    const id = await submit(t);
    const { question_id } = await ask(t, id);
    const unknown = await answerRaw(t, id, 'q-2030-0123456789abcdef0123456789abcdef', { answer: 'Yes.' });
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).error).toBe('question_not_found');
    const garbage = await answerRaw(t, id, 'not-a-question', { answer: 'Yes.' });
    expect((await errorOf(garbage)).error).toBe('question_not_found');
    const noTask = await answerRaw(t, 'task-2030-00000000000000000000000000000000', question_id, { answer: 'Yes.' });
    expect(noTask.status).toBe(404);
    expect((await errorOf(noTask)).error).toBe('task_not_found');
    const otherTask = await submit(t);
    expect((await errorOf(await answerRaw(t, otherTask, question_id, { answer: 'Yes.' }))).error).toBe('question_not_found');
    await answer(t, id, question_id, 'First answer.');
    const again = await answerRaw(t, id, question_id, { answer: 'Second answer.' });
    expect(again.status).toBe(409);
    expect((await errorOf(again)).error).toBe('already_answered');
    expect(((await publicTask(t, id)).questions as Json[])[0]!.answer).toBe('First answer.');
  });

  it('racing answers on one instance: exactly one wins', async () => {
    const id = await submit(t);
    const { question_id } = await ask(t, id);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => answerRaw(t, id, question_id, { answer: `answer ${i}` })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(7);
  });
});

describe('the status page answer form refused before it reaches the service', () => {
  const t = useTestApp();

  it('a body over the limit is a page saying the answer was not sent', async () => {
    const id = await submit(t);
    const res = await fetch(`${t.url}/tasks/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `task_id=${id}&question_id=q&answer=${'x'.repeat(70_000)}`,
    });
    expect(res.status).toBe(413);
    expect(await res.text()).toContain('The answer was not sent.');
  });
});
