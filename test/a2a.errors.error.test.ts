import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { describe, expect, it } from 'vitest';
import { jsonRpcError } from '../src/a2a/envelopes.js';
import { AppError } from '../src/domain/errors.js';
import { a2aClient, BINDINGS, operator, sendRequest, taskOf, uniqueDescription } from './a2a.support.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';

/**
 * Every refusal of the A2A door (docs/a2a.md "Errors"): A2A's own errors with the spec's codes
 * (the SDK's client turns them into its error classes), the contract's refusals as JSON-RPC
 * -32602/-32050/-32051/-32052/-32053 with `data`, and over HTTP+JSON the contract's status and body.
 */

type Json = Record<string, unknown>;
const V1 = { 'a2a-version': '1.0' };

describe.each(STORES)('A2A errors on %s', (store) => {
  const t = useTestApp({ store });

  const rpc = async (body: unknown, headers: Record<string, string> = V1): Promise<{ status: number; body: Json }> => {
    const res = await postJson(`${t.url}/a2a`, body, headers);
    return { status: res.status, body: (await res.json()) as Json };
  };
  const call = async (method: string, params: unknown, headers: Record<string, string> = V1) => rpc({ jsonrpc: '2.0', id: 7, method, params }, headers);
  const errorOf = (answer: { body: Json }) => answer.body.error as { code: number; message: string; data?: unknown };
  const message = (parts: unknown[], extra: Json = {}) => ({
    message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts, ...extra },
    configuration: { returnImmediately: true },
  });
  const submit = async (): Promise<string> => {
    const answer = await call('SendMessage', message([{ text: uniqueDescription() }]));
    return ((answer.body.result as Json).task as Json).id as string;
  };

  it('refuses a request without A2A-Version 1.0 with VersionNotSupportedError, on both bindings', async () => {
    for (const headers of [{}, { 'a2a-version': '0.3' }, { 'a2a-version': '2.0' }] as Record<string, string>[]) {
      const answer = await call('GetTask', { id: 'task-2030-00000000000000000000000000000000' }, headers);
      expect(errorOf(answer)).toMatchObject({ code: -32009, data: [{ reason: 'VERSION_NOT_SUPPORTED', domain: 'a2a-protocol.org' }] });
      expect(answer.body.id).toBe(7);
    }
    const rest = await fetch(`${t.url}/a2a/v1/tasks/task-2030-00000000000000000000000000000000`, { headers: { 'a2a-version': '0.3' } });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ error: { code: 400, status: 'FAILED_PRECONDITION', details: [{ reason: 'VERSION_NOT_SUPPORTED' }] } });
    // The version may also come as a query parameter.
    const byQuery = await fetch(`${t.url}/a2a/v1/tasks/task-2030-00000000000000000000000000000000?A2A-Version=1.0`);
    expect(byQuery.status).toBe(404);
  });

  it('answers JSON-RPC envelope errors: invalid request, unknown method, params not an object, a body the guards refuse', async () => {
    expect(errorOf(await rpc([]))).toMatchObject({ code: -32600 });
    expect(errorOf(await rpc({ jsonrpc: '2.0', id: 1 }))).toMatchObject({ code: -32600 });
    expect(errorOf(await rpc({ jsonrpc: '1.0', id: 1, method: 'GetTask' }))).toMatchObject({ code: -32600 });
    expect(errorOf(await call('tasks/get', {}))).toMatchObject({ code: -32601 });
    expect(errorOf(await call('GetTask', [1]))).toMatchObject({ code: -32602 });
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = [deep];
    const nested = await call('SendMessage', deep);
    expect(nested.status).toBe(400);
    expect(errorOf(nested)).toMatchObject({ code: -32700, data: { error: 'malformed_request' } });
    const large = await postJson(`${t.url}/a2a`, { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: message([{ text: 'x'.repeat(70_000) }]) }, V1);
    expect(large.status).toBe(413);
    expect(await large.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32602, data: { error: 'payload_too_large' } } });
    const broken = await fetch(`${t.url}/a2a`, { method: 'POST', headers: { ...V1, 'content-type': 'application/json' }, body: '{"jsonrpc":' });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, data: { error: 'invalid_json' } } });
  });

  it('refuses malformed messages as invalid params with the contract data, and files as ContentTypeNotSupportedError', async () => {
    for (const params of [
      {},
      { message: { role: 'ROLE_USER', parts: [{ text: 'no id' }] } },
      message([]),
      { message: { messageId: 'm-1', role: 'ROLE_AGENT', parts: [{ text: 'agent' }] } },
      message([{ text: 'a' }, { data: [1, 2] }]),
      message([{ text: 'a' }, { data: {} }, { data: {} }]),
      message([{ nothing: true }]),
      { ...message([{ text: uniqueDescription() }]), configuration: { returnImmediately: 'yes' } },
      { ...message([{ text: uniqueDescription() }]), configuration: { historyLength: -1 } },
    ]) {
      const error = errorOf(await call('SendMessage', params));
      expect(error, JSON.stringify(params)).toMatchObject({ code: -32602, data: { error: 'validation_failed', details: [expect.any(String)] } });
    }
    for (const part of [
      { url: 'https://example.com/a.pdf', mediaType: 'application/pdf' },
      { raw: 'aGVsbG8=' },
      { text: '<b>x</b>', mediaType: 'text/html' },
    ]) {
      expect(errorOf(await call('SendMessage', message([part])))).toMatchObject({ code: -32005, data: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] });
    }
  });

  it('refuses an invalid task request, a context the service did not issue, and a message to the operator without reply_to', async () => {
    const invalid = errorOf(await call('SendMessage', message([{ text: uniqueDescription() }, { data: { task_type: 'astrology' } }])));
    expect(invalid).toMatchObject({ code: -32602, data: { error: 'validation_failed' } });
    expect(JSON.stringify(invalid.data)).toContain('task_type');
    const context = errorOf(await call('SendMessage', message([{ text: uniqueDescription() }], { contextId: 'ctx-2030-00000000000000000000000000000000' })));
    expect(context).toMatchObject({ code: -32602, data: { error: 'validation_failed', details: [expect.stringContaining('contextId')] } });
    const id = await submit();
    const noReply = errorOf(await call('SendMessage', message([{ text: 'A note for the operator.' }], { taskId: id })));
    expect(noReply).toMatchObject({ code: -32602, data: { error: 'validation_failed' } });
    expect(JSON.stringify(noReply.data)).toContain('reply_to');
  });

  it('answers a duplicate -32051, a blocked requester -32052, and maps rate limits and outages to -32050 and -32053', async () => {
    const text = uniqueDescription();
    expect((await call('SendMessage', message([{ text }]))).body.result).toBeDefined();
    const duplicate = errorOf(await call('SendMessage', message([{ text }])));
    expect(duplicate).toMatchObject({ code: -32051, data: { error: 'duplicate_task', existing_task_id: expect.any(String) } });

    const block = await postJson(
      `${t.url}/api/v1/admin/blocklist`,
      { kind: 'requester', value: 'blocked-agent' },
      { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    );
    expect(block.status).toBe(201);
    const blocked = errorOf(await call('SendMessage', message([{ text: uniqueDescription() }, { data: { requester: 'blocked-agent' } }])));
    expect(blocked).toMatchObject({ code: -32052, data: { error: 'client_blocked' } });

    const limited = jsonRpcError(new AppError('rate_limited', 'Limit reached.', { limit: 'tasks_per_hour', retry_after_seconds: 60 }, { 'Retry-After': '60' }));
    expect(limited?.error).toMatchObject({ code: -32050, data: { error: 'rate_limited', retry_after_seconds: 60 } });
    expect(limited?.headers).toMatchObject({ 'Retry-After': '60' });
    expect(jsonRpcError(new AppError('service_unavailable', 'Down.'))?.error).toMatchObject({ code: -32053, data: { error: 'service_unavailable' } });
  });

  it('answers A2A errors through the SDK client on both bindings: unknown task, final task, no extended card', async () => {
    for (const binding of BINDINGS) {
      const client = await a2aClient(t, binding);
      const unknown = 'task-2030-00000000000000000000000000000000';
      await expect(client.getTask({ tenant: '', id: unknown, historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(client.sendMessage(sendRequest({ text: 'Hello?', taskId: unknown }))).rejects.toBeInstanceOf(TaskNotFoundError);
      const drain = async (stream: AsyncGenerator<unknown>) => {
        for await (const _ of stream);
      };
      await expect(drain(client.resubscribeTask({ tenant: '', id: unknown }))).rejects.toBeInstanceOf(TaskNotFoundError);

      const id = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription() }))).id as string;
      await operator.patch(t, id, { status: 'rejected', operator_notes: 'Out of our area.' });
      await expect(client.sendMessage(sendRequest({ text: 'Please reconsider.', taskId: id }))).rejects.toBeInstanceOf(UnsupportedOperationError);
      await expect(drain(client.resubscribeTask({ tenant: '', id }))).rejects.toBeInstanceOf(UnsupportedOperationError);
    }
    // The SDK's client asks for an extended card only when the card declares one; this card does not.
    expect(errorOf(await call('GetExtendedAgentCard', {}))).toMatchObject({ code: -32004, data: [{ reason: 'UNSUPPORTED_OPERATION' }] });
    const rest = await fetch(`${t.url}/a2a/v1/extendedAgentCard`, { headers: V1 });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ error: { status: 'FAILED_PRECONDITION', details: [{ reason: 'UNSUPPORTED_OPERATION' }] } });
  });

  it('refuses a body that is not JSON with ContentTypeNotSupportedError in each binding envelope', async () => {
    const jsonRpc = await fetch(`${t.url}/a2a`, { method: 'POST', headers: { ...V1, 'content-type': 'text/plain' }, body: 'ct test' });
    expect(jsonRpc.status).toBe(200);
    expect(await jsonRpc.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32005, data: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] } });
    const rest = await fetch(`${t.url}/a2a/v1/message:send`, { method: 'POST', headers: { ...V1, 'content-type': 'text/plain' }, body: 'ct test' });
    expect(rest.status).toBe(415);
    expect(await rest.json()).toMatchObject({ error: { code: 415, status: 'INVALID_ARGUMENT', details: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] } });
  });

  it('cancels: a submitted task is withdrawn (CANCELED), an accepted one asks the operator (unchanged), a final one is not cancelable', async () => {
    for (const binding of BINDINGS) {
      const client = await a2aClient(t, binding);
      const unknown = 'task-2030-00000000000000000000000000000000';
      await expect(client.cancelTask({ tenant: '', id: unknown, metadata: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
      const fresh = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription() }))).id as string;
      expect(taskOf(await client.cancelTask({ tenant: '', id: fresh, metadata: undefined })).status).toMatchObject({ state: 'TASK_STATE_CANCELED' });
      await expect(client.cancelTask({ tenant: '', id: fresh, metadata: undefined })).rejects.toBeInstanceOf(TaskNotCancelableError);
      const accepted = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription() }))).id as string;
      await operator.patch(t, accepted, { status: 'accepted' });
      expect(taskOf(await client.cancelTask({ tenant: '', id: accepted, metadata: undefined })).status).toMatchObject({ state: 'TASK_STATE_WORKING' });
      const messages = (await (await fetch(`${t.url}/api/v1/admin/messages?limit=50`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } })).json()) as {
        messages: { task_ids: string[] }[];
      };
      expect(messages.messages.some((m) => m.task_ids.includes(accepted))).toBe(true);
    }
  });

  it('refuses push configs of an unknown task (TaskNotFoundError), a sixth config and a receiver the SSRF guard refuses (invalid params)', async () => {
    const unknown = errorOf(
      await call('CreateTaskPushNotificationConfig', { taskId: 'task-2030-00000000000000000000000000000000', url: 'https://hooks.example-agent.dev/a' }),
    );
    expect(unknown).toMatchObject({ code: -32001 });
    const id = await submit();
    for (let i = 0; i < 5; i++) {
      expect((await call('CreateTaskPushNotificationConfig', { taskId: id, url: `https://hooks.example-agent.dev/${i}` })).body.result).toBeDefined();
    }
    const sixth = errorOf(await call('CreateTaskPushNotificationConfig', { taskId: id, url: 'https://hooks.example-agent.dev/6' }));
    expect(sixth).toMatchObject({ code: -32602, data: { error: 'validation_failed' } });
    const other = await submit();
    const loopback = errorOf(await call('CreateTaskPushNotificationConfig', { taskId: other, url: 'http://127.0.0.1:9/hook' }));
    expect(loopback).toMatchObject({ code: -32602, data: { error: 'validation_failed' } });
    expect(errorOf(await call('GetTaskPushNotificationConfig', { taskId: other }))).toMatchObject({ code: -32602 });
  });

  it('reads proto field names as well as JSON names (history_length, context_id)', async () => {
    const id = await submit();
    const answer = await call('GetTask', { id, history_length: 0 });
    expect((answer.body.result as Json).history).toEqual([]);
    const contextId = (answer.body.result as Json).contextId as string;
    const listed = await call('ListTasks', { context_id: contextId, page_size: 1 });
    expect(((listed.body.result as Json).tasks as Json[]).map((task) => task.id)).toEqual([id]);
  });

  it('refuses bad ListTasks and GetTask parameters as invalid params', async () => {
    for (const params of [
      { pageSize: 0 },
      { pageSize: 101 },
      { pageSize: '5' },
      { status: 'DONE' },
      { pageToken: 'forged' },
      { statusTimestampAfter: 'yesterday' },
    ]) {
      expect(errorOf(await call('ListTasks', { contextId: 'ctx-2030-00000000000000000000000000000000', ...params })), JSON.stringify(params)).toMatchObject({
        code: -32602,
      });
    }
    expect(errorOf(await call('GetTask', { id: await submit(), historyLength: -2 }))).toMatchObject({ code: -32602 });
    expect(errorOf(await call('GetTask', {}))).toMatchObject({ code: -32602 });
  });

  it('answers the HTTP+JSON binding with the contract status and body, and 404 for a path A2A does not define', async () => {
    const send = (body: unknown) => postJson(`${t.url}/a2a/v1/message:send`, body, V1);
    const invalid = await send(message([{ text: uniqueDescription() }, { data: { task_type: 'astrology' } }]));
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toMatchObject({ error: 'validation_failed', details: [expect.stringContaining('task_type')] });
    expect((await send('"text"')).status).toBe(400);
    const unknownPath = await fetch(`${t.url}/a2a/v1/widgets`, { headers: V1 });
    expect(unknownPath.status).toBe(404);
    expect(await unknownPath.json()).toMatchObject({ error: 'not_found' });
    const notFound = await fetch(`${t.url}/a2a/v1/tasks/task-2030-00000000000000000000000000000000`, { headers: V1 });
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({
      error: { code: 404, status: 'NOT_FOUND', details: [{ reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' }] },
    });
  });
});

describe.each(STORES)('A2A submissions past the quota on %s', (store) => {
  // The contract's own limit: one status_poll task a day per client (no RELAXED value here).
  const t = useTestApp({ store, env: { STATUS_POLL_LIMIT_PER_DAY: '1' } });
  const message = (text: string) => ({
    message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] },
    configuration: { returnImmediately: true },
  });

  it('answers the second status_poll task of the day -32050 with retry_after_seconds, and 429 with the contract body over HTTP+JSON', async () => {
    const first = await postJson(`${t.url}/a2a`, { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: message(uniqueDescription()) }, V1);
    expect(((await first.json()) as Json).result).toBeDefined();
    const second = await postJson(`${t.url}/a2a`, { jsonrpc: '2.0', id: 2, method: 'SendMessage', params: message(uniqueDescription()) }, V1);
    const error = ((await second.json()) as Json).error as { code: number; data: { error: string; retry_after_seconds: number } };
    expect(error).toMatchObject({ code: -32050, data: { error: 'rate_limited' } });
    expect(error.data.retry_after_seconds).toBeGreaterThan(0);
    expect(Number(second.headers.get('retry-after'))).toBe(error.data.retry_after_seconds);
    const rest = await postJson(`${t.url}/a2a/v1/message:send`, message(uniqueDescription()), V1);
    expect(rest.status).toBe(429);
    expect(await rest.json()).toMatchObject({ error: 'rate_limited' });
    const counted = (await (await fetch(`${t.url}/api/v1/admin/tasks?limit=10`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } })).json()) as {
      tasks: unknown[];
    };
    expect(counted.tasks).toHaveLength(1);
  });
});
