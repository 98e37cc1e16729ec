import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { call, type Json, texts, useMcpClient } from './mcp.support.js';
import { patchOk } from './operator.support.js';
import { ask } from './questions.support.js';
import { STORES, useTestApp, validTask } from './support/app.js';

/** Submits through a task-augmented call (the SDK's experimental tasks API); returns the MCP task id. */
async function submitAsTask(client: Client): Promise<string> {
  const stream = client.experimental.tasks.callToolStream({ name: 'submit_human_task', arguments: validTask() }, CallToolResultSchema, {
    task: { ttl: 60_000 },
  });
  for await (const message of stream) {
    if (message.type === 'taskCreated') return message.task.taskId;
    if (message.type === 'error') throw message.error;
  }
  throw new Error('no task created');
}

describe.each(STORES)('MCP: questions from the operator on %s', (store) => {
  // tasks/get answers at once here: this suite looks at each state right after causing it.
  const t = useTestApp({ store, env: { MCP_TASK_HOLD_SECONDS: '0' } });
  const client = useMcpClient(t);

  it('the whole loop through MCP: input_required with the question, the note in check_task_status, answer_operator_question', async () => {
    const id = await submitAsTask(client);
    await patchOk(t, id, { status: 'accepted' });
    expect((await client.experimental.tasks.getTask(id)).status).toBe('working');
    const asked = await ask(t, id, 'Should I photograph the back yard as well?');
    const waiting = await client.experimental.tasks.getTask(id);
    expect(waiting).toMatchObject({ taskId: id, status: 'input_required', statusMessage: 'Should I photograph the back yard as well?' });

    const status = await call(client, 'check_task_status', { task_id: id });
    expect(status.structuredContent).toMatchObject({ awaiting_answer: true, questions: [{ question_id: asked.question_id, answer: null }] });
    expect(texts(status).join('\n')).toContain(`answer_operator_question {task_id: "${id}", question_id: "${asked.question_id}"`);

    const answered = await call(client, 'answer_operator_question', { task_id: id, question_id: asked.question_id, answer: 'Yes, the back yard too.' });
    expect(answered.isError).toBeFalsy();
    expect(answered.structuredContent).toMatchObject({ task_id: id, awaiting_answer: false, questions: [{ answer: 'Yes, the back yard too.' }] });
    expect((await client.experimental.tasks.getTask(id)).status).toBe('working');
    const after = await call(client, 'check_task_status', { task_id: id });
    expect(texts(after).join('\n')).not.toContain('waits for your answer');
  });

  it('refusals are results with a hint: already answered, unknown question, unknown task, bad answer', async () => {
    const id = await submitAsTask(client);
    const asked = await ask(t, id);
    await call(client, 'answer_operator_question', { task_id: id, question_id: asked.question_id, answer: 'Front.' });
    const again = await call(client, 'answer_operator_question', { task_id: id, question_id: asked.question_id, answer: 'Side.' });
    expect(again.isError).toBe(true);
    expect(again.structuredContent).toMatchObject({ error: 'already_answered' });
    expect(texts(again).join('\n')).toMatch(/Hint: .*already has its answer/);
    const unknown = await call(client, 'answer_operator_question', { task_id: id, question_id: 'q-2030-0123456789abcdef0123456789abcdef', answer: 'x' });
    expect(unknown.structuredContent).toMatchObject({ error: 'question_not_found' });
    const noTask = await call(client, 'answer_operator_question', {
      task_id: 'task-2030-00000000000000000000000000000000',
      question_id: asked.question_id,
      answer: 'x',
    });
    expect(noTask.structuredContent).toMatchObject({ error: 'task_not_found' });
    const empty = await call(client, 'answer_operator_question', { task_id: id, question_id: asked.question_id, answer: '' });
    expect(empty.structuredContent).toMatchObject({ error: 'validation_failed' });
    const missing = await call(client, 'answer_operator_question', { answer: 'x' });
    expect((missing.structuredContent as Json).details).toEqual(['task_id is required', 'question_id is required']);
  });
});
