import type { Client } from '@modelcontextprotocol/client';
import { resultFromTaskOutcome, TaskFailedError } from '@modelcontextprotocol/ext-tasks/client';
import { describe, expect, it } from 'vitest';
import { heldCount } from './longpoll.support.js';
import { connectModern, modernRpc, taskSession } from './mcp.modern.support.js';
import { call, connectClient, type Json } from './mcp.support.js';
import { patchOk } from './operator.support.js';
import { STORES, TEST_ADMIN_KEY, TestClock, useSuiteResource, useTestApp, validTask } from './support/app.js';

/**
 * Protocol revision 2026-07-28 beside 2025-11-25 on the same /mcp: the official v2 client, and the
 * tasks extension driven by @modelcontextprotocol/ext-tasks' own client, against the real app.
 */

type ToolResult = { isError?: boolean; structuredContent?: Json; content?: unknown[] };

describe.each(STORES)('MCP 2026-07-28 on %s', (store) => {
  const t = useTestApp({ store, env: { TASK_LIMIT_PER_HOUR: '3' } });
  const modern = useSuiteResource(
    () => connectModern(t),
    (client) => client.close(),
  );
  const legacy = useSuiteResource(
    () => connectClient(t),
    (client) => client.close(),
  );

  it('is classified as modern by the official v2 client, and still as 2025-11-25 by the v1 client', async () => {
    expect(modern.getProtocolEra()).toBe('modern');
    expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(modern.getServerCapabilities()?.extensions).toEqual({ 'io.modelcontextprotocol/tasks': {} });
    expect(legacy.getServerVersion()?.name).toBe('human-task-service');
    expect((await legacy.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('lists the same tools, with the same descriptions and schemas, on both revisions', async () => {
    const v2 = (await modern.listTools()).tools;
    const v1 = (await legacy.listTools()).tools;
    expect(v2.map((tool) => tool.name)).toEqual(v1.map((tool) => tool.name));
    // The v2 client keeps no `execution` (2026-07-28 moved tasks into the extension); the rest is one definition.
    const shape = (tool: object) => {
      const { execution: _execution, ...rest } = JSON.parse(JSON.stringify(tool)) as Json;
      return rest;
    };
    expect(v2.map(shape)).toEqual(v1.map(shape));
  });

  it('answers the same results and refusals (isError with the contract error body) as 2025-11-25', async () => {
    const v2 = (await modern.callTool({ name: 'get_human_services', arguments: {} })) as ToolResult;
    const v1 = await call(legacy, 'get_human_services');
    expect(v2.structuredContent).toEqual(v1.structuredContent);
    const refused = (await modern.callTool({ name: 'check_task_status', arguments: { task_id: 'task-2030-00000000000000000000000000000000' } })) as ToolResult;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ error: 'task_not_found' });
    // A plain call (no tasks extension declared) of submit_human_task answers the submission as before.
    const plain = (await modern.callTool({ name: 'submit_human_task', arguments: validTask() })) as ToolResult;
    expect(plain.structuredContent).toMatchObject({ status: 'submitted' });
  });

  it('shares the caller identity and limits with REST and 2025-11-25', async () => {
    // Default: 3 submissions per hour per client; the plain call above used one.
    expect((await call(legacy, 'submit_human_task', validTask())).isError).toBeFalsy();
    const rest = await fetch(`${t.url}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(validTask()) });
    expect(rest.ok).toBe(true);
    const fourth = (await modern.callTool({ name: 'submit_human_task', arguments: validTask() })) as ToolResult;
    expect(fourth.isError).toBe(true);
    expect(fourth.structuredContent).toMatchObject({ error: 'rate_limited', limit: 'tasks_per_hour' });
  });
});

describe.each(STORES)("MCP tasks extension (2026-07-28) with ext-tasks' own client on %s", (store) => {
  // Room for the submissions of this suite; the clock moves before each change so updated_at does.
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock, env: { TASK_LIMIT_PER_HOUR: '50', TASK_LIMIT_PER_DAY: '50' } });
  const change = (taskId: string, body: Json) => {
    clock.advance(1000);
    return patchOk(t, taskId, body);
  };
  async function submit(client: Client) {
    const session = taskSession(t, client);
    const execution = await session.callTool('submit_human_task', validTask() as Record<string, string>, { task: { preference: 'require' } });
    if (execution.kind !== 'task') throw new Error('not a task');
    return { session, execution, taskId: execution.handle.taskId as string };
  }

  it('runs submit_human_task as a task whose taskId is the task_id: completed with the result inline as soon as it is delivered', async () => {
    const client = await connectModern(t, 'ext-tasks-flow');
    const { session, execution, taskId } = await submit(client);
    try {
      expect(taskId).toMatch(/^task-\d{4}-[0-9a-f]{32}$/);
      const rest = (await (await fetch(`${t.url}/api/v1/tasks/${taskId}`)).json()) as Json;
      expect(rest).toMatchObject({ task_id: taskId, status: 'submitted' });
      await change(taskId, { status: 'accepted' });
      // The client's tasks/get is held until the task changes: the delivery is seen at once.
      const before = t.deps.waits.size;
      const settling = execution.settle();
      await heldCount(t, before + 1);
      await change(taskId, { status: 'delivered', operator_notes: 'Open on Sundays 8-12.' });
      const { outcome } = await settling;
      expect(outcome.status).toBe('completed');
      const result = resultFromTaskOutcome(outcome) as ToolResult;
      expect(result.structuredContent).toMatchObject({ task_id: taskId, status: 'delivered', operator_notes: 'Open on Sundays 8-12.' });
    } finally {
      await session.close();
      await client.close();
    }
  });

  it('reports a rejection as failed with the reason', async () => {
    const client = await connectModern(t, 'ext-tasks-reject');
    const { session, execution, taskId } = await submit(client);
    try {
      await change(taskId, { status: 'rejected', operator_notes: 'Outside the service area.' });
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('failed');
      if (outcome.status !== 'failed') return;
      expect(outcome.error).toBeInstanceOf(TaskFailedError);
      expect(outcome.error.message).toMatch(/Outside the service area/);
    } finally {
      await session.close();
      await client.close();
    }
  });

  it('answers tasks/cancel on an accepted task with a withdrawal request for the operator, who decides: the status does not change', async () => {
    const client = await connectModern(t, 'ext-tasks-cancel');
    const { session, taskId } = await submit(client);
    try {
      await change(taskId, { status: 'accepted' });
      const cancel = await modernRpc(t, 'tasks/cancel', { taskId });
      expect(cancel.status).toBe(200);
      expect(cancel.body.result).toMatchObject({ task_id: taskId, status: 'accepted', message: expect.stringMatching(/operator decides/) });
      const messages = (await (await fetch(`${t.url}/api/v1/admin/messages`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } })).json()) as {
        messages: Json[];
      };
      const withdrawal = messages.messages.find((m) => String(m.subject ?? '').includes(taskId));
      expect(withdrawal).toBeDefined();
      expect(String(withdrawal?.message)).toMatch(new RegExp(`withdraw task ${taskId}`));
      const task = (await (await fetch(`${t.url}/api/v1/tasks/${taskId}`)).json()) as Json;
      expect(task.status).toBe('accepted');
    } finally {
      await session.close();
      await client.close();
    }
  });

  it('serves the extension on any revision-2026 request: no session, the envelope declares it', async () => {
    // 2026-07-28 has no tool-level `execution` (the SDK's codec drops it): the envelope's declaration decides.
    const call = await modernRpc(t, 'tools/call', { name: 'submit_human_task', arguments: validTask() });
    expect(call.body.result).toMatchObject({ resultType: 'task', status: 'working', pollIntervalMs: 1000 });
    const taskId = (call.body.result as Json).taskId as string;
    const before = t.deps.waits.size;
    const got = modernRpc(t, 'tasks/get', { taskId });
    await heldCount(t, before + 1);
    await change(taskId, { status: 'accepted' });
    expect((await got).body.result).toMatchObject({ taskId, status: 'working', resultType: 'complete', pollIntervalMs: 1000 });
  });
});

describe.each(STORES)('MCP tasks extension (2026-07-28): the operator asks, the agent answers with tasks/update, on %s', (store) => {
  // No hold on tasks/get, so each look answers at once; the clock moves before each change.
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock, env: { MCP_TASK_HOLD_SECONDS: '0' } });
  const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' };

  it('is input_required with the question as its input request, working again once answered, completed with the result after delivery', async () => {
    const created = await modernRpc(t, 'tools/call', { name: 'submit_human_task', arguments: validTask() });
    const taskId = (created.body.result as Json).taskId as string;
    expect((await modernRpc(t, 'tasks/get', { taskId })).body.result).toMatchObject({ status: 'working' });

    clock.advance(1000);
    const asked = await fetch(`${t.url}/api/v1/admin/tasks/${taskId}/questions`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ question: 'Which entrance should I use?' }),
    });
    expect(asked.status).toBe(201);
    const { question_id: questionId } = (await asked.json()) as { question_id: string };

    const waiting = (await modernRpc(t, 'tasks/get', { taskId })).body.result as Json;
    expect(waiting).toMatchObject({ status: 'input_required', statusMessage: expect.stringContaining('Which entrance should I use?') });
    expect(waiting.inputRequests).toMatchObject({ [questionId]: { method: 'elicitation/create', params: { message: 'Which entrance should I use?' } } });

    // Answering anything but the open request is refused with the request the server waits for.
    const wrong = await modernRpc(t, 'tasks/update', { taskId, inputResponses: { 'q-nope': { action: 'accept', content: { answer: 'x' } } } });
    expect((wrong.body.error as Json).code).toBe(-32602);

    clock.advance(1000);
    const update = await modernRpc(t, 'tasks/update', {
      taskId,
      inputResponses: { [questionId]: { action: 'accept', content: { answer: 'The side entrance.' } } },
    });
    expect(update.body.error).toBeUndefined();
    const rest = (await (await fetch(`${t.url}/api/v1/tasks/${taskId}`)).json()) as Json;
    expect(rest).toMatchObject({ awaiting_answer: false, questions: [{ question_id: questionId, answer: 'The side entrance.' }] });
    expect((await modernRpc(t, 'tasks/get', { taskId })).body.result).toMatchObject({ status: 'working' });

    // A second answer: nothing is open any more.
    const again = await modernRpc(t, 'tasks/update', { taskId, inputResponses: { [questionId]: { action: 'accept', content: { answer: 'Again.' } } } });
    expect((again.body.error as Json).code).toBe(-32602);

    clock.advance(1000);
    await patchOk(t, taskId, { status: 'accepted' });
    clock.advance(1000);
    await patchOk(t, taskId, { status: 'delivered', operator_notes: 'Open on Sundays, side entrance.' });
    const done = (await modernRpc(t, 'tasks/get', { taskId })).body.result as Json;
    expect(done).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(done.result)).toContain('Open on Sundays, side entrance.');
  });
});
