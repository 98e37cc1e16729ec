import { describe, expect, it } from 'vitest';
import { envelope, modernRpc } from './mcp.modern.support.js';
import { type Json, rpc } from './mcp.support.js';
import { patchOk } from './operator.support.js';
import { STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

/** Bad input on protocol revision 2026-07-28 and its tasks extension: the protocol's errors, never a 500 or a hang. */

const UNKNOWN = 'task-2030-00000000000000000000000000000000';

type RpcError = { code: number; message: string; data?: Json };
const errorOf = (body: Json) => body.error as RpcError;

describe.each(STORES)('MCP 2026-07-28, bad input, on %s', (store) => {
  const t = useTestApp({ store, env: { MCP_TASK_HOLD_SECONDS: '0', TASK_LIMIT_PER_HOUR: '50', TASK_LIMIT_PER_DAY: '50' } });

  async function submitTask(): Promise<string> {
    const created = await modernRpc(t, 'tools/call', { name: 'submit_human_task', arguments: validTask() });
    return (created.body.result as Json).taskId as string;
  }

  it("refuses the extension's methods when the request does not declare it (-32021)", async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const res = await modernRpc(t, method, { taskId: UNKNOWN, inputResponses: {} }, { tasks: false });
      expect(errorOf(res.body).code, method).toBe(-32021);
    }
  });

  it('answers an unknown or malformed taskId with -32602 on tasks/get, tasks/update and tasks/cancel', async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      expect(errorOf((await modernRpc(t, method, { taskId: UNKNOWN, inputResponses: {} })).body), method).toMatchObject({
        code: -32602,
        message: /Task not found/,
      });
      expect(errorOf((await modernRpc(t, method, { taskId: 42 as unknown as string })).body).code, method).toBe(-32602);
    }
  });

  it('answers tasks/update with no open question with -32602 (no open input request)', async () => {
    const taskId = await submitTask();
    const res = await modernRpc(t, 'tasks/update', { taskId, inputResponses: { q: { action: 'accept', content: { answer: 'Yes.' } } } });
    expect(res.status).toBeLessThan(500);
    expect(errorOf(res.body)).toMatchObject({ code: -32602, message: /no open input request/ });
  });

  it('records one withdrawal request however often tasks/cancel is sent, and refuses it for a final task', async () => {
    const taskId = await submitTask();
    // Accepted: a submitted task would be withdrawn at once (test/cancel.doors.happy.test.ts).
    await patchOk(t, taskId, { status: 'accepted' });
    const first = await modernRpc(t, 'tasks/cancel', { taskId });
    const second = await modernRpc(t, 'tasks/cancel', { taskId });
    expect((first.body.result as Json).message_id).toBe((second.body.result as Json).message_id);
    const list = (await (await fetch(`${t.url}/api/v1/admin/messages`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } })).json()) as {
      messages: Json[];
    };
    expect(list.messages.filter((m) => m.subject === `Withdrawal request for ${taskId}`)).toHaveLength(1);
    await patchOk(t, taskId, { status: 'rejected', operator_notes: "Withdrawn at the requester's request." });
    const late = await modernRpc(t, 'tasks/cancel', { taskId });
    expect(errorOf(late.body)).toMatchObject({ code: -32602, data: { error: 'invalid_transition' } });
  });

  it('refuses requests that mix the revisions or name an unknown one', async () => {
    const withSession = await modernRpc(t, 'tools/list', {}, { headers: { 'mcp-session-id': 'abc' } });
    expect(withSession.status).toBe(400);
    expect(errorOf(withSession.body).code).toBe(-32600);
    const unknown = await modernRpc(t, 'tools/list', {}, { meta: envelope(true, '2099-01-01'), headers: { 'mcp-protocol-version': '2099-01-01' } });
    expect(errorOf(unknown.body)).toMatchObject({ code: -32022, data: { supported: ['2026-07-28'] } });
    const mismatch = await modernRpc(t, 'tools/list', {}, { headers: { 'mcp-protocol-version': '2025-11-25' } });
    expect(mismatch.status).toBe(400);
    expect(errorOf(mismatch.body).code).toBe(-32020);
    const missing = await modernRpc(t, 'tools/list', {}, { headers: { 'mcp-protocol-version': '' } });
    expect(errorOf(missing.body).code).toBe(-32020);
    const batch = await rpc(
      t,
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope(true) } },
      ],
      { 'mcp-protocol-version': '2026-07-28' },
    );
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as Json).error).toMatchObject({ code: -32600 });
    // initialize is 2025-11-25's: an unknown or a 2026 version there negotiates 2025-11-25, as the revision says.
    for (const protocolVersion of ['2099-01-01', '2026-07-28']) {
      const init = await rpc(t, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      });
      expect(((await init.json()) as { result: Json }).result.protocolVersion).toBe('2025-11-25');
    }
    // ping is gone from 2026-07-28.
    expect(errorOf((await modernRpc(t, 'ping', {})).body).code).toBe(-32601);
  });

  it("refuses oversized or deeply nested _meta with the contract's HTTP errors", async () => {
    let deep: Json = {};
    for (let i = 0; i < 200; i++) deep = { d: deep };
    const nested = await modernRpc(t, 'tools/list', {}, { meta: { ...envelope(true), deep } });
    // A body the guards refuse is JSON-RPC's parse error on /mcp, the contract's code as its data (docs/mcp.md).
    expect(nested.status).toBe(400);
    expect(nested.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, data: { error: 'malformed_request' } } });
    const big = await modernRpc(t, 'tools/list', {}, { meta: { ...envelope(true), big: 'x'.repeat(70_000) } });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ error: 'payload_too_large' });
  });
});
