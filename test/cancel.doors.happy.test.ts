import { CreateTaskResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { modernRpc } from './mcp.modern.support.js';
import { useMcpClient } from './mcp.support.js';
import { ADMIN, adminGet, type Json, patch, patchOk, taskIn } from './operator.support.js';
import { STORES, useTestApp, validTask } from './support/app.js';
import { listWebhooks, useReceiver, WEBHOOK_TEST_ENV } from './webhooks.support.js';

/**
 * Cancellation aligned on every door (services/tasks/cancel.ts; contract "A2A 1.0" and "Agent
 * control and development"): a submitted task nobody accepted is withdrawn at once, with the
 * rejection's audit entry, mail and webhook, and a message linked to the task for the operator;
 * an accepted task gets the withdrawal request and keeps its status; a final one is refused.
 */

const REASON = "Withdrawn at the requester's request.";

async function messagesAbout(t: { url: string }, taskId: string): Promise<Json[]> {
  const list = (await (await adminGet(t as never, '/api/v1/admin/messages?limit=50')).json()) as { messages: (Json & { task_ids: string[] })[] };
  return list.messages.filter((m) => m.task_ids.includes(taskId));
}

describe.each(STORES)('cancelling a task on every door, on %s', (store) => {
  const receiver = useReceiver();
  const t = useTestApp({ store, env: { ...WEBHOOK_TEST_ENV, MCP_TASK_HOLD_SECONDS: '0' } });
  const client = useMcpClient(t);
  const cancel = (id: string) => fetch(`${t.url}/api/v1/tasks/${id}/cancel`, { method: 'POST' });

  it('REST: a submitted task is withdrawn at once (202, rejected, the reason), with its audit entry, webhook, mail and a message for the operator', async () => {
    const id = await taskIn(t, 'submitted', { callback_url: `${receiver.url}/ok-cancel`, contact_email: 'agent@mail.example-agent.dev' });
    const res = await cancel(id);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ task_id: id, status: 'rejected', message: REASON });

    const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(task).toMatchObject({ status: 'rejected', operator_notes: REASON });

    const audit = (await (await adminGet(t, `/api/v1/admin/audit?task_id=${id}`)).json()) as { entries: Json[] };
    expect(audit.entries).toEqual([
      expect.objectContaining({ actor: 'requester', action: 'task.rejected', details: expect.objectContaining({ door: 'rest' }) }),
    ]);

    const events = await listWebhooks(t, id);
    expect(events.map((e) => e.event)).toEqual(['task.rejected']);

    const mail = (await (await adminGet(t, '/api/v1/admin/outbox?limit=50')).json()) as { outbox: Json[] };
    expect(mail.outbox.some((m) => m.task_id === id && m.kind === 'task_rejected' && m.recipient === 'agent@mail.example-agent.dev')).toBe(true);

    const messages = await messagesAbout(t, id);
    expect(messages).toHaveLength(1);
    expect(String(messages[0]?.message)).toContain(`Task ${id} was withdrawn at the requester's request`);

    // Cancelling again: the task is final now.
    const again = await cancel(id);
    expect(again.status).toBe(409);
    expect(((await again.json()) as Json).error).toBe('invalid_transition');
    expect(await messagesAbout(t, id)).toHaveLength(1);
  });

  it('REST: an accepted task keeps its status and the operator gets the withdrawal request', async () => {
    const id = await taskIn(t, 'accepted');
    const res = await cancel(id);
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ task_id: id, status: 'accepted', message: expect.stringMatching(/operator decides/) });
    expect(((await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json).status).toBe('accepted');
    expect(String((await messagesAbout(t, id))[0]?.message)).toContain(`Please withdraw task ${id}`);
  });

  it('MCP 2025-11-25: tasks/cancel withdraws a submitted task (cancelled), requests an accepted one (working), refuses a final one', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'submit_human_task', arguments: validTask(), task: {} } },
      CreateTaskResultSchema,
    );
    const id = created.task.taskId;
    const withdrawn = await client.experimental.tasks.cancelTask(id);
    expect(withdrawn).toMatchObject({ taskId: id, status: 'cancelled' });
    expect((await client.experimental.tasks.getTask(id)).status).toBe('cancelled');
    expect(((await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json).operator_notes).toBe(REASON);

    const accepted = await taskIn(t, 'accepted');
    const requested = await client.experimental.tasks.cancelTask(accepted);
    expect(requested).toMatchObject({ taskId: accepted, status: 'working', statusMessage: expect.stringMatching(/operator decides/) });
    expect(((await (await fetch(`${t.url}/api/v1/tasks/${accepted}`)).json()) as Json).status).toBe('accepted');

    const error = await client.experimental.tasks.cancelTask(id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toMatch(/terminal status: cancelled/);
  });

  it('MCP 2026-07-28: tasks/cancel withdraws a submitted task, which tasks/get then reports cancelled', async () => {
    const id = await taskIn(t, 'submitted');
    const res = await modernRpc(t, 'tasks/cancel', { taskId: id });
    expect(res.body.result).toMatchObject({ task_id: id, status: 'rejected', message: REASON });
    expect((await modernRpc(t, 'tasks/get', { taskId: id })).body.result).toMatchObject({ taskId: id, status: 'cancelled' });
    const again = await modernRpc(t, 'tasks/cancel', { taskId: id });
    expect(again.body.error).toMatchObject({ code: -32602, data: { error: 'invalid_transition' } });
  });

  it('the operator can no longer accept a withdrawn task', async () => {
    const id = await taskIn(t, 'submitted');
    expect((await cancel(id)).status).toBe(202);
    const res = await patch(t, id, { status: 'accepted' }, { headers: ADMIN });
    expect(res.status).toBe(409);
    await expect(patchOk(t, id, { operator_notes: 'x' })).rejects.toThrow(/409/);
  });
});
