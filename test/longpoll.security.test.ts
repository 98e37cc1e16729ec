import http from 'node:http';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { etagOf, heldCount, readTask } from './longpoll.support.js';
import { connectClient } from './mcp.support.js';
import { patchOk, submit } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';

describe.each(STORES)('conditional reads and waits, security, on %s', (store) => {
  // tasks/get answers at once here (its hold for a change is tested in mcp.tasks.happy).
  const t = useTestApp({ store, env: { MCP_TASK_HOLD_SECONDS: '0' } });

  it("never echoes the caller's Prefer text: Preference-Applied is built from the number alone", async () => {
    const id = await submit(t);
    const etag = await etagOf(t, id);
    const res = await readTask(t, id, { 'if-none-match': etag, prefer: 'wait=1; x="<script>", evil=1' });
    expect(res.status).toBe(304);
    expect(res.headers.get('preference-applied')).toBe('wait=1');
  });

  it("answers a held request with its own task only, never another task's change", async () => {
    const mine = await submit(t);
    const other = await submit(t);
    const etag = await etagOf(t, mine);
    const held = readTask(t, mine, { 'if-none-match': etag, prefer: 'wait=2' });
    await heldCount(t, 1);
    await patchOk(t, other, { status: 'accepted' });
    const res = await held;
    expect(res.status).toBe(304);
    expect(res.text).toBe('');
  });

  it('keeps the contact e-mail out of the ETag-bearing body, the 304 and the MCP task views', async () => {
    const email = 'secret-agent@mail.example-agent.dev';
    const id = await submit(t, { contact_email: email });
    const read = await readTask(t, id);
    expect(read.text).not.toContain(email);
    const again = await readTask(t, id, { 'if-none-match': read.headers.get('etag') ?? '' });
    expect(again.status).toBe(304);
    expect([...again.headers.values()].join(' ')).not.toContain(email);
    const client = await connectClient(t);
    try {
      const task = await client.experimental.tasks.getTask(id);
      expect(JSON.stringify(task)).not.toContain(email);
      await patchOk(t, id, { status: 'rejected', operator_notes: 'No.' });
      const result = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      expect(JSON.stringify(result)).not.toContain(email);
    } finally {
      await client.close();
    }
  });

  it('releases held MCP calls (tasks/result, check_task_status) whose client goes away', async () => {
    const id = await submit(t);
    const bodies = [
      { jsonrpc: '2.0', id: 1, method: 'tasks/result', params: { taskId: id } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'check_task_status', arguments: { task_id: id, wait_seconds: 50 } } },
    ];
    const requests = bodies.map((body) => {
      const payload = JSON.stringify(body);
      const request = http.request(`${t.url}/mcp`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(payload) },
      });
      request.on('error', () => undefined);
      request.end(payload);
      return request;
    });
    await heldCount(t, 2);
    for (const request of requests) request.destroy();
    await expect.poll(() => t.deps.waits.size, { timeout: 3000 }).toBe(0);
  });
});
