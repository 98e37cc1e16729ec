import { describe, expect, it } from 'vitest';
import { modernRpc } from './mcp.modern.support.js';
import { adminGet, type Json, submit } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';

/**
 * A refused cancellation changes nothing (services/tasks/cancel.ts): the withdrawal at once goes
 * through the message guards like the withdrawal request, so a requester over the message quota
 * gets the contract's 429 on REST and its JSON-RPC form on MCP, and the task stays submitted with
 * no audit entry and no message.
 */

describe.each(STORES)('a cancellation over the message quota, on %s', (store) => {
  const t = useTestApp({ store, env: { MESSAGE_LIMIT_PER_HOUR: '1' } });
  const cancel = (id: string) => fetch(`${t.url}/api/v1/tasks/${id}/cancel`, { method: 'POST' });

  it('is refused with 429 rate_limited (REST) and -32602 rate_limited (MCP 2026-07-28), leaving the task submitted', async () => {
    const first = await submit(t);
    expect((await cancel(first)).status).toBe(202);

    const second = await submit(t);
    const refused = await cancel(second);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as Json).error).toBe('rate_limited');
    const overMcp = await modernRpc(t, 'tasks/cancel', { taskId: second });
    expect(overMcp.body.error).toMatchObject({ code: -32602, data: { error: 'rate_limited' } });

    expect(((await (await fetch(`${t.url}/api/v1/tasks/${second}`)).json()) as Json).status).toBe('submitted');
    const audit = (await (await adminGet(t, `/api/v1/admin/audit?task_id=${second}`)).json()) as { entries: Json[] };
    expect(audit.entries).toEqual([]);
    const messages = (await (await adminGet(t, '/api/v1/admin/messages?limit=50')).json()) as { messages: (Json & { task_ids: string[] })[] };
    expect(messages.messages.filter((m) => m.task_ids.includes(second))).toEqual([]);
  });
});
