import { describe, expect, it } from 'vitest';
import { modernRpc } from './mcp.modern.support.js';
import { ADMIN, adminGet, type Json, patchOk, submit } from './operator.support.js';
import { postJson, STORES, useTestApp } from './support/app.js';

/**
 * The limits of a cancellation (services/tasks/cancel.ts). A withdrawal request (an accepted
 * task) is a message the requester sends: over the message quota it gets the contract's 429 on
 * REST and its JSON-RPC form on MCP, and nothing changes. A withdrawal at once is not a message:
 * it spends no quota. A blocked client is refused both.
 */

const messagesAbout = async (t: { url: string }, taskId: string) =>
  ((await (await adminGet(t as never, '/api/v1/admin/messages?limit=50')).json()) as { messages: (Json & { task_ids: string[] })[] }).messages.filter((m) =>
    m.task_ids.includes(taskId),
  );

describe.each(STORES)('cancellations and the message quota, on %s', (store) => {
  const t = useTestApp({ store, env: { MESSAGE_LIMIT_PER_HOUR: '1' } });
  const cancel = (id: string) => fetch(`${t.url}/api/v1/tasks/${id}/cancel`, { method: 'POST' });

  it('withdraws submitted tasks without spending the quota; a withdrawal request over it is 429 (REST) and -32602 rate_limited (MCP), changing nothing', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await cancel(await submit(t));
      expect(res.status).toBe(202);
      expect(((await res.json()) as Json).status).toBe('rejected');
    }

    const first = await submit(t);
    await patchOk(t, first, { status: 'accepted' });
    expect((await cancel(first)).status).toBe(202);

    const second = await submit(t);
    await patchOk(t, second, { status: 'accepted' });
    const refused = await cancel(second);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as Json).error).toBe('rate_limited');
    const overMcp = await modernRpc(t, 'tasks/cancel', { taskId: second });
    expect(overMcp.body.error).toMatchObject({ code: -32602, data: { error: 'rate_limited' } });
    expect(((await (await fetch(`${t.url}/api/v1/tasks/${second}`)).json()) as Json).status).toBe('accepted');
    expect(await messagesAbout(t, second)).toEqual([]);
  });
});

describe.each(STORES)('cancellations from a blocked client, on %s', (store) => {
  const t = useTestApp({ store });

  it('are refused with 403 client_blocked, the task left submitted with no audit entry and no message', async () => {
    const taskId = await submit(t);
    const blocked = await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: '127.0.0.1' }, ADMIN);
    expect(blocked.status).toBe(201);
    try {
      const refused = await fetch(`${t.url}/api/v1/tasks/${taskId}/cancel`, { method: 'POST' });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as Json).error).toBe('client_blocked');
      expect(((await (await fetch(`${t.url}/api/v1/tasks/${taskId}`)).json()) as Json).status).toBe('submitted');
      const audit = (await (await adminGet(t, `/api/v1/admin/audit?task_id=${taskId}`)).json()) as { entries: Json[] };
      expect(audit.entries).toEqual([]);
      expect(await messagesAbout(t, taskId)).toEqual([]);
    } finally {
      const id = ((await blocked.json()) as Json).id as string;
      await fetch(`${t.url}/api/v1/admin/blocklist/${id}`, { method: 'DELETE', headers: ADMIN });
    }
  });
});
