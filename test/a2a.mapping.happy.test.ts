import { describe, expect, it } from 'vitest';
import { getA2ATask } from '../src/services/a2a/tasks.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

/**
 * The task as an A2A Task (docs/a2a.md "Mapping"): every task carries a service-issued contextId,
 * and its states, status message, history and deliverable artifact follow the contract's table.
 */

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

describe.each(STORES)('A2A mapping on %s', (store) => {
  const t = useTestApp({ store });

  const patch = async (id: string, body: unknown) => {
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${id}`, {
      method: 'PATCH',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
  };

  it('follows a task from submitted to completed, with the question and answer in its history', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
    expect(res.status).toBe(202);
    const { task_id: id } = (await res.json()) as { task_id: string };

    const submitted = await getA2ATask(t.deps, id);
    expect(submitted.id).toBe(id);
    expect(submitted.contextId).toMatch(/^ctx-\d{4}-[0-9a-f]{32}$/);
    expect(submitted.status.state).toBe('TASK_STATE_SUBMITTED');
    expect(submitted.history?.map((m) => m.role)).toEqual(['ROLE_USER']);

    await patch(id, { status: 'accepted' });
    expect((await getA2ATask(t.deps, id)).status.state).toBe('TASK_STATE_WORKING');

    const asked = await postJson(`${t.url}/api/v1/admin/tasks/${id}/questions`, { question: 'Which entrance should I check?' }, admin);
    expect(asked.status).toBe(201);
    const { question_id: questionId } = (await asked.json()) as { question_id: string };
    const waiting = await getA2ATask(t.deps, id);
    expect(waiting.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(waiting.status.message).toMatchObject({ role: 'ROLE_AGENT', messageId: questionId, parts: [{ text: 'Which entrance should I check?' }] });

    const answered = await postJson(`${t.url}/api/v1/tasks/${id}/questions/${questionId}/answer`, { answer: 'The one on Main Street.' });
    expect(answered.status).toBe(200);
    const working = await getA2ATask(t.deps, id);
    expect(working.status.state).toBe('TASK_STATE_WORKING');
    expect(working.history?.map((m) => [m.role, m.parts[0]?.text])).toEqual([
      ['ROLE_USER', expect.any(String)],
      ['ROLE_AGENT', 'Which entrance should I check?'],
      ['ROLE_USER', 'The one on Main Street.'],
    ]);
    expect((await getA2ATask(t.deps, id, 1)).history).toHaveLength(1);
    expect((await getA2ATask(t.deps, id, 0)).history).toEqual([]);

    await patch(id, { status: 'delivered', operator_notes: 'Open from 8 to 12 on Sundays.' });
    const done = await getA2ATask(t.deps, id);
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.contextId).toBe(submitted.contextId);
    expect(done.artifacts).toHaveLength(1);
    expect(done.artifacts?.[0]).toMatchObject({ artifactId: 'deliverable', name: 'deliverable', parts: [{ text: 'Open from 8 to 12 on Sundays.' }] });
    expect(done.artifacts?.[0]?.metadata).toMatchObject({ receipt: expect.any(String), deliverable_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('tells a withdrawal, an operator rejection and a passed deadline apart', async () => {
    const states: string[] = [];
    for (const reason of ["Withdrawn at the requester's request.", 'Out of our area.']) {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
      const { task_id: id } = (await res.json()) as { task_id: string };
      await patch(id, { status: 'rejected', operator_notes: reason });
      const task = await getA2ATask(t.deps, id);
      states.push(task.status.state);
      expect(task.status.message?.parts[0]?.text).toBe(reason);
    }
    expect(states).toEqual(['TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);
  });
});
