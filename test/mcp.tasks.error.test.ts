import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { call, type Json, rpc, useMcpClient } from './mcp.support.js';
import { patchOk } from './operator.support.js';
import { STORES, useTestApp, validTask } from './support/app.js';

async function mcpError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

const UNKNOWN = 'task-2030-00000000000000000000000000000000';

describe.each(STORES)('MCP tasks, bad input, on %s', (store) => {
  const t = useTestApp({ store, env: { MCP_TASK_HOLD_SECONDS: '0' } });
  const client = useMcpClient(t);

  async function submitTask(): Promise<string> {
    const result = await client.request(
      { method: 'tools/call', params: { name: 'submit_human_task', arguments: validTask(), task: {} } },
      CreateTaskResultSchema,
    );
    return result.task.taskId;
  }

  it('answers tasks/cancel on an accepted task with the unchanged task: the operator decides', async () => {
    const id = await submitTask();
    await patchOk(t, id, { status: 'accepted' });
    const answer = await client.experimental.tasks.cancelTask(id);
    expect(answer).toMatchObject({ taskId: id, status: 'working', statusMessage: expect.stringMatching(/operator decides/) });
    // Nothing changed: the task is still open.
    expect((await client.experimental.tasks.getTask(id)).status).toBe('working');
  });

  it('refuses to cancel a final task', async () => {
    const id = await submitTask();
    await patchOk(t, id, { status: 'rejected', operator_notes: 'No.' });
    const error = await mcpError(client.experimental.tasks.cancelTask(id));
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toMatch(/terminal/);
  });

  it.each([UNKNOWN, 'nonsense', 'x'.repeat(300)])(
    'answers tasks/get, tasks/result and tasks/cancel for an unknown task id (%#) with "task not found"',
    async (id) => {
      for (const attempt of [
        () => client.experimental.tasks.getTask(id),
        () => client.experimental.tasks.getTaskResult(id, CallToolResultSchema),
        () => client.experimental.tasks.cancelTask(id),
      ]) {
        const error = await mcpError(attempt());
        expect(error.code).toBe(ErrorCode.InvalidParams);
        expect(error.message).toMatch(/not found/i);
      }
    },
  );

  it.each([5, null, { id: 'x' }, ['task'], true])(
    'answers tasks/get, tasks/result and tasks/cancel with a taskId of %j: -32602 invalid params, no validator internals',
    async (taskId) => {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        const res = await rpc(t, { jsonrpc: '2.0', id: 7, method, params: { taskId } });
        const body = (await res.json()) as { id: number; error?: { code: number; message: string; data?: unknown } };
        expect(body.id, method).toBe(7);
        expect(body.error?.code, method).toBe(ErrorCode.InvalidParams);
        expect(body.error?.message, method).toMatch(/taskId must be a string \(a task_id\)\.$/);
        expect(JSON.stringify(body), method).not.toMatch(/invalid_type|expected|received|ZodError|"path"/i);
      }
    },
  );

  it('refuses a task-augmented call of a tool that cannot be a task', async () => {
    for (const name of ['check_task_status', 'get_human_services', 'message_human_operator']) {
      const error = await mcpError(
        client.request({ method: 'tools/call', params: { name, arguments: { task_id: UNKNOWN }, task: {} } }, CreateTaskResultSchema),
      );
      expect(error.code).toBe(ErrorCode.MethodNotFound);
      expect(error.message).toMatch(/cannot be called as a task/);
    }
  });

  it('refuses an invalid task-augmented submission with a JSON-RPC error carrying every field error', async () => {
    const error = await mcpError(
      client.request(
        { method: 'tools/call', params: { name: 'submit_human_task', arguments: { task_type: 'nope', description: 'x' }, task: {} } },
        CreateTaskResultSchema,
      ),
    );
    expect(error.code).toBe(ErrorCode.InvalidParams);
    const data = error.data as Json;
    expect(data.error).toBe('validation_failed');
    expect((data.details as string[]).join('\n')).toMatch(/task_type/);
    expect((data.details as string[]).join('\n')).toMatch(/description/);
    expect(error.message).toMatch(/Hint:/);
  });

  it('does not list tasks: there are no sessions or accounts to list them for', async () => {
    const res = await rpc(t, { jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
    const body = (await res.json()) as { error?: { code: number } };
    expect(body.error?.code).toBe(ErrorCode.MethodNotFound);
  });

  it.each([
    [{ wait_seconds: 51 }, /wait_seconds/],
    [{ wait_seconds: -1 }, /wait_seconds/],
    [{ wait_seconds: 1.5 }, /wait_seconds/],
    [{ wait_seconds: '10' }, /wait_seconds/],
    [{ known_updated_at: 12 }, /known_updated_at/],
    [{ known_updated_at: 'x'.repeat(65) }, /known_updated_at/],
  ])('refuses check_task_status with %j (validation_failed naming the field)', async (args, field) => {
    const started = Date.now();
    const result = await call(client, 'check_task_status', { task_id: UNKNOWN, ...args });
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toBe('validation_failed');
    expect((result.structuredContent.details as string[]).join('\n')).toMatch(field);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('answers check_task_status with wait_seconds for an unknown task at once (task_not_found)', async () => {
    const started = Date.now();
    const result = await call(client, 'check_task_status', { task_id: UNKNOWN, wait_seconds: 50 });
    expect(result.structuredContent.error).toBe('task_not_found');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('ignores a known_updated_at that is not a timestamp: answers at once, since the task differs from it', async () => {
    const id = await submitTask();
    const started = Date.now();
    const result = await call(client, 'check_task_status', { task_id: id, wait_seconds: 50, known_updated_at: 'yesterday' });
    expect(result.structuredContent.task_id).toBe(id);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
