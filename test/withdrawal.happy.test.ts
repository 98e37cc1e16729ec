import { describe, expect, it } from 'vitest';
import { ADMIN, patchOk, taskIn } from './operator.support.js';
import { postJson, STORES, useTestApp } from './support/app.js';

/**
 * POST /api/v1/tasks/{task_id}/cancel (issue 30, item 7; contract "Agent control and development"):
 * a one-call withdrawal request. The status does not change; the operator sees a message naming the
 * task and decides. The same service function answers MCP tasks/cancel.
 */

type Json = Record<string, unknown>;

describe.each(STORES)('the cancel endpoint on %s', (store) => {
  const t = useTestApp({ store });
  const cancel = (id: string) => fetch(`${t.url}/api/v1/tasks/${id}/cancel`, { method: 'POST' });

  it('records a withdrawal request for the operator and answers 202 with the unchanged status; a repeat sends no second message', async () => {
    const id = await taskIn(t, 'accepted');
    const res = await cancel(id);
    expect(res.status).toBe(202);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ task_id: id, status: 'accepted' });
    expect(String(body.message)).toContain('operator decides');
    expect(((await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json).status).toBe('accepted');

    const again = await cancel(id);
    expect(again.status).toBe(202);
    const messages = (await (await fetch(`${t.url}/api/v1/admin/messages?limit=50`, { headers: ADMIN })).json()) as {
      messages: { task_ids: string[]; message: string }[];
    };
    const naming = messages.messages.filter((m) => m.task_ids.includes(id));
    expect(naming).toHaveLength(1);
    expect(naming[0]?.message).toContain(`Please withdraw task ${id}`);

    // The operator withdraws it by rejecting it; the request is then answered by the final status.
    await patchOk(t, id, { status: 'rejected', operator_notes: "Withdrawn at the requester's request." });
    const late = await cancel(id);
    expect(late.status).toBe(409);
    expect(((await late.json()) as Json).error).toBe('invalid_transition');
  });

  it('answers 404 task_not_found for an unknown or malformed id, and takes no body', async () => {
    const unknown = await cancel(`task-2030-${'0'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Json).error).toBe('task_not_found');
    expect((await cancel('nonsense')).status).toBe(404);
    const withBody = await postJson(`${t.url}/api/v1/tasks/task-2030-${'0'.repeat(32)}/cancel`, { reason: 'x' });
    expect(withBody.status).toBe(404);
  });
});

describe.each(STORES)('a message about a task (task_id) on %s', (store) => {
  const t = useTestApp({ store });

  it('links the message to the task named in task_id, even when the text does not name it', async () => {
    const id = await taskIn(t, 'submitted');
    const res = await postJson(`${t.url}/api/v1/messages`, {
      message: 'Is a photo from the street enough?',
      reply_to: 'agent@mail.example-agent.dev',
      task_id: id,
    });
    expect(res.status).toBe(201);
    const { message_id: messageId } = (await res.json()) as { message_id: string };
    const messages = (await (await fetch(`${t.url}/api/v1/admin/messages?limit=50`, { headers: ADMIN })).json()) as {
      messages: { message_id: string; task_ids: string[] }[];
    };
    expect(messages.messages.find((m) => m.message_id === messageId)?.task_ids).toEqual([id]);
  });

  it('refuses a task_id that names no task with 422 naming task_id, before any quota or look-up', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, {
      message: 'Is a photo from the street enough?',
      reply_to: 'agent@mail.example-agent.dev',
      task_id: `task-2030-${'f'.repeat(32)}`,
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: string; details: string[] };
    expect(body.error).toBe('validation_failed');
    expect(body.details.join(' ')).toMatch(/^task_id /);
  });
});
