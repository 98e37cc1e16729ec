import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult, CallToolResultSchema, RELATED_TASK_META_KEY } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { heldCount, sleep } from './longpoll.support.js';
import { call, connectClient, type Json, useMcpClient } from './mcp.support.js';
import { patchOk } from './operator.support.js';
import { STORES, startTestApp, TestClock, useTestApp, validTask } from './support/app.js';

/** Submits through a task-augmented call (the SDK's experimental tasks API) and returns the MCP task. */
async function submitAsTask(client: Client, args: Json = validTask()) {
  const stream = client.experimental.tasks.callToolStream({ name: 'submit_human_task', arguments: args }, CallToolResultSchema, { task: { ttl: 60_000 } });
  const messages = [];
  for await (const message of stream) {
    messages.push(message);
    // The first status after creation is enough: the next poll would be minutes away.
    if (message.type === 'taskStatus' || message.type === 'error' || message.type === 'result') break;
  }
  return messages;
}

describe.each(STORES)('MCP tasks on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  // tasks/get answers at once here (no hold for a change); the hold has its own suite below.
  const t = useTestApp({ store, clock, env: { MCP_TASK_HOLD_SECONDS: '0' } });
  const client = useMcpClient(t);

  it('declares the tasks capability, and submit_human_task as optionally a task', async () => {
    expect(client.getServerCapabilities()?.tasks).toEqual({ requests: { tools: { call: {} } }, cancel: {} });
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.submit_human_task?.execution?.taskSupport).toBe('optional');
    for (const name of ['get_human_services', 'check_task_status', 'message_human_operator'])
      expect(byName[name]?.execution?.taskSupport ?? 'forbidden').toBe('forbidden');
  });

  it('creates the human task from a task-augmented call: the MCP taskId is the task_id', async () => {
    const messages = await submitAsTask(client, validTask({ requester: 'mcp-task-agent' }));
    expect(messages.map((m) => m.type)).toEqual(['taskCreated', 'taskStatus']);
    const created = messages[0];
    if (created?.type !== 'taskCreated') throw new Error('no task');
    const taskId = created.task.taskId;
    expect(taskId).toMatch(/^task-2030-[0-9a-f]{32}$/);
    expect(created.task).toMatchObject({ status: 'working', ttl: null, pollInterval: 1000, createdAt: '2030-03-10T10:00:00.000Z' });
    // The same task over REST: one task, whichever door.
    const rest = (await (await fetch(`${t.url}/api/v1/tasks/${taskId}`)).json()) as Json;
    expect(rest).toMatchObject({ task_id: taskId, status: 'submitted', requester: 'mcp-task-agent' });
  });

  it('reports working while accepted, polling every second whatever the ETA (tasks/get holds for a change), and completed with the task once delivered', async () => {
    const [created] = await submitAsTask(client);
    if (created?.type !== 'taskCreated') throw new Error('no task');
    const id = created.task.taskId;
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-10T13:00:00Z' });
    const accepted = await client.experimental.tasks.getTask(id);
    expect(accepted).toMatchObject({ taskId: id, status: 'working', pollInterval: 1000 });
    expect(accepted.statusMessage).toMatch(/2030-03-10T13:00:00/);

    // tasks/result blocks until the task is final, then answers at once.
    const pending = client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    await heldCount(t, 1);
    await sleep(100);
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Open on Sundays 8-12.' });
    const result = (await pending) as CallToolResult & { structuredContent: Json };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ task_id: id, status: 'delivered', operator_notes: 'Open on Sundays 8-12.' });
    expect(typeof result.structuredContent.receipt).toBe('string');
    expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: id });
    const done = await client.experimental.tasks.getTask(id);
    expect(done.status).toBe('completed');
    expect(done.pollInterval).toBeUndefined();
  });

  it('answers a rejection with a result marked isError, carrying the task and the reason', async () => {
    const [created] = await submitAsTask(client);
    if (created?.type !== 'taskCreated') throw new Error('no task');
    const id = created.task.taskId;
    await patchOk(t, id, { status: 'rejected', operator_notes: 'Outside the service area.' });
    expect((await client.experimental.tasks.getTask(id)).status).toBe('completed');
    const result = (await client.experimental.tasks.getTaskResult(id, CallToolResultSchema)) as CallToolResult & { structuredContent: Json };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ task_id: id, status: 'rejected', operator_notes: 'Outside the service area.' });
    const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
    expect(text).toMatch(/rejected this task/);
    expect(text).toMatch(/Outside the service area/);
  });

  it('runs a whole task through callToolStream to its final result', async () => {
    // An ETA a minute away makes the client look again after a minute: move the test clock instead of waiting.
    const stream = client.experimental.tasks.callToolStream({ name: 'submit_human_task', arguments: validTask() }, CallToolResultSchema, { task: {} });
    const seen: string[] = [];
    let final: CallToolResult | undefined;
    for await (const message of stream) {
      seen.push(message.type === 'taskStatus' ? `status:${message.task.status}` : message.type);
      if (message.type === 'taskCreated') {
        // Delivered before the client's first tasks/get: it sees completed and fetches the result.
        await patchOk(t, message.task.taskId, { status: 'accepted' });
        await patchOk(t, message.task.taskId, { status: 'delivered', operator_notes: 'Done.' });
      }
      if (message.type === 'result') final = message.result as CallToolResult;
      if (message.type === 'error') throw message.error;
    }
    expect(seen).toEqual(['taskCreated', 'status:completed', 'result']);
    expect(final?.structuredContent).toMatchObject({ status: 'delivered', operator_notes: 'Done.' });
  });

  it('keeps plain calls of submit_human_task working for clients without tasks', async () => {
    const result = await call(client, 'submit_human_task', validTask());
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: 'submitted' });
    expect(result.structuredContent.status_url).toBeTruthy();
  });

  it('check_task_status with wait_seconds returns as soon as the task changes', async () => {
    const submitted = await call(client, 'submit_human_task', validTask());
    const id = String(submitted.structuredContent.task_id);
    const first = await call(client, 'check_task_status', { task_id: id });
    const known = String(first.structuredContent.updated_at);
    clock.advance(1000);
    const held = call(client, 'check_task_status', { task_id: id, wait_seconds: 30, known_updated_at: known });
    await heldCount(t, 1);
    const started = Date.now();
    await patchOk(t, id, { status: 'accepted' });
    const result = await held;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.structuredContent).toMatchObject({ task_id: id, status: 'accepted' });
    expect(result.structuredContent.updated_at).not.toBe(known);
  });

  it('check_task_status with wait_seconds returns the task unchanged when the time passes', async () => {
    const submitted = await call(client, 'submit_human_task', validTask());
    const id = String(submitted.structuredContent.task_id);
    const started = Date.now();
    const result = await call(client, 'check_task_status', { task_id: id, wait_seconds: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(result.structuredContent).toMatchObject({ task_id: id, status: 'submitted' });
  });

  it('check_task_status does not hold a final task, nor one changed since known_updated_at', async () => {
    const submitted = await call(client, 'submit_human_task', validTask());
    const id = String(submitted.structuredContent.task_id);
    const known = String((await call(client, 'check_task_status', { task_id: id })).structuredContent.updated_at);
    clock.advance(1000);
    await patchOk(t, id, { status: 'accepted' });
    let started = Date.now();
    expect((await call(client, 'check_task_status', { task_id: id, wait_seconds: 50, known_updated_at: known })).structuredContent.status).toBe('accepted');
    expect(Date.now() - started).toBeLessThan(3000);
    await patchOk(t, id, { status: 'rejected', operator_notes: 'No.' });
    started = Date.now();
    expect((await call(client, 'check_task_status', { task_id: id, wait_seconds: 50 })).structuredContent.status).toBe('rejected');
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe.each(STORES)('MCP waits at shutdown on %s', (store) => {
  it('answers a held check_task_status with the unchanged task when the app closes', async () => {
    const t = await startTestApp({ store });
    const client = await connectClient(t);
    const submitted = await call(client, 'submit_human_task', validTask());
    const id = String(submitted.structuredContent.task_id);
    const held = call(client, 'check_task_status', { task_id: id, wait_seconds: 50 });
    await heldCount(t, 1);
    const started = Date.now();
    const closing = t.close();
    const result = await held;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.structuredContent).toMatchObject({ task_id: id, status: 'submitted' });
    await closing;
    await client.close();
  });
});

describe.runIf(STORES.includes('postgres'))('MCP tasks across PostgreSQL instances', () => {
  const a = useTestApp({ store: 'postgres', env: { MCP_TASK_HOLD_SECONDS: '0' } });
  const b = useTestApp(() => ({ shareDatabaseWith: a, env: { MCP_TASK_HOLD_SECONDS: '0' } }));

  it('answers tasks/get and tasks/result on any instance: the MCP task is the service task', async () => {
    const clientA = await connectClient(a);
    const clientB = await connectClient(b);
    try {
      const [created] = await submitAsTask(clientA);
      if (created?.type !== 'taskCreated') throw new Error('no task');
      const id = created.task.taskId;
      expect((await clientB.experimental.tasks.getTask(id)).status).toBe('working');
      const pending = clientB.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      await heldCount(b, 1);
      await patchOk(a, id, { status: 'rejected', operator_notes: 'Not possible.' });
      const result = (await pending) as CallToolResult & { structuredContent: Json };
      expect(result.isError).toBe(true);
      expect(result.structuredContent.status).toBe('rejected');
    } finally {
      await clientA.close();
      await clientB.close();
    }
  });
});

describe.each(STORES)('MCP tasks that finish promptly on %s', (store) => {
  // The default hold: tasks/get waits for a change (a 1 s poll interval, not the ETA).
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock });
  const client = useMcpClient(t);

  it("ends the SDK's own callToolStream loop within moments of the delivery", async () => {
    const stream = client.experimental.tasks.callToolStream({ name: 'submit_human_task', arguments: validTask() }, CallToolResultSchema, { task: {} });
    const seen: string[] = [];
    let deliveredAt = 0;
    let endedAt = 0;
    for await (const message of stream) {
      seen.push(message.type === 'taskStatus' ? `status:${message.task.status}` : message.type);
      if (message.type === 'taskCreated') {
        expect(message.task.pollInterval).toBe(1000);
        const id = message.task.taskId;
        clock.advance(1000);
        await patchOk(t, id, { status: 'accepted' });
        // Delivered while the loop's first tasks/get is held: it answers at once, not a poll interval later.
        void (async () => {
          await heldCount(t, 1);
          clock.advance(1000);
          await patchOk(t, id, { status: 'delivered', operator_notes: 'Done.' });
          deliveredAt = Date.now();
        })();
      }
      if (message.type === 'result') endedAt = Date.now();
      if (message.type === 'error') throw message.error;
    }
    expect(seen).toEqual(['taskCreated', 'status:completed', 'result']);
    expect(deliveredAt).toBeGreaterThan(0);
    expect(endedAt - deliveredAt).toBeLessThan(5000);
  });
});
