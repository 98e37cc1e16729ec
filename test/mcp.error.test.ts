import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { call, connectClient, type Json, MCP_ACCEPT, rpc, texts, toolsCall, useMcpClient } from './mcp.support.js';
import { postJson, STORES, startTestApp, useTestApp, validTask } from './support/app.js';

/** A refusal is a result: isError, the REST error body as structuredContent and JSON text, and a hint. */
function expectRefusal(result: Awaited<ReturnType<typeof call>>, code: string): Json {
  expect(result.isError).toBe(true);
  expect(result.structuredContent.error).toBe(code);
  expect(typeof result.structuredContent.message).toBe('string');
  const [json, hint] = texts(result);
  expect(JSON.parse(json!)).toEqual(result.structuredContent);
  expect(hint).toMatch(/^Hint: /);
  return result.structuredContent;
}

describe.each(STORES)('MCP refusals and protocol errors on %s', (store) => {
  const t = useTestApp({ store });
  const client = useMcpClient(t);

  describe('tool refusals', () => {
    it('submit_human_task: every invalid field at once, with a hint to fix them', async () => {
      const result = await call(client, 'submit_human_task', { task_type: 'mind_reading', description: 'short', location_detail: 'x'.repeat(600) });
      const body = expectRefusal(result, 'validation_failed');
      expect(body.details).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^task_type must be one of/),
          expect.stringMatching(/^description must be between 10 and 5000 characters/),
          expect.stringMatching(/^location_detail must be at most 500 characters/),
          expect.stringMatching(/^contact_email is required unless delivery is "status_poll"/),
        ]),
      );
      expect(texts(result)[1]).toMatch(/Fix every field listed in details/);
    });

    it('submit_human_task: the same refusal body as REST for the same payload', async () => {
      const payload = { task_type: 'data_collection', description: 'Too short' };
      const rest = await postJson(`${t.url}/api/v1/tasks`, payload);
      expect(rest.status).toBe(422);
      const result = await call(client, 'submit_human_task', payload);
      expect(result.structuredContent).toEqual(await rest.json());
    });

    it('submit_human_task: a deadline in the past and a placeholder contact_email are refused', async () => {
      const past = expectRefusal(await call(client, 'submit_human_task', validTask({ deadline: '2001-01-01T00:00:00Z' })), 'validation_failed');
      expect(past.details).toEqual([expect.stringMatching(/^deadline must be in the future/)]);
      const placeholder = await call(client, 'submit_human_task', validTask({ contact_email: 'agent@example.com' }));
      expect(expectRefusal(placeholder, 'validation_failed').details).toEqual([expect.stringMatching(/^contact_email .*placeholder/)]);
      expect(texts(placeholder)[1]).toMatch(/real mailboxes/);
    });

    it('submit_human_task: a malformed idempotency_key is a field error listed with the others', async () => {
      const result = await call(client, 'submit_human_task', { ...validTask({ description: 'short' }), idempotency_key: 'has spaces in it' });
      const body = expectRefusal(result, 'validation_failed');
      expect(body.details).toEqual([expect.stringMatching(/^description/), expect.stringMatching(/^idempotency_key must be 1 to 255 visible ASCII/)]);
      const alone = expectRefusal(await call(client, 'submit_human_task', { ...validTask(), idempotency_key: 42 }), 'validation_failed');
      expect(alone.details).toEqual([expect.stringMatching(/^idempotency_key/)]);
    });

    it('submit_human_task: an idempotency_key reused with other arguments is refused with a hint', async () => {
      const first = await call(client, 'submit_human_task', { ...validTask(), idempotency_key: 'reuse-key-1' });
      expect(first.isError).toBeFalsy();
      const result = await call(client, 'submit_human_task', { ...validTask(), idempotency_key: 'reuse-key-1' });
      expectRefusal(result, 'validation_failed');
      expect(texts(result)[1]).toMatch(/new idempotency_key/);
    });

    it('submit_human_task: a duplicate points at the existing task, whichever door it came in by', async () => {
      const task = validTask();
      const first = await call(client, 'submit_human_task', task);
      expect(first.isError).toBeFalsy();
      const dup = await call(client, 'submit_human_task', { ...task, description: `  ${String(task.description).toUpperCase()} ` });
      const body = expectRefusal(dup, 'duplicate_task');
      expect(body.existing_task_id).toBe(first.structuredContent.task_id);
      expect(texts(dup)[1]).toContain(`check_task_status with task_id "${String(first.structuredContent.task_id)}"`);

      const restTask = validTask();
      const rest = (await (await postJson(`${t.url}/api/v1/tasks`, restTask)).json()) as Json;
      const viaMcp = expectRefusal(await call(client, 'submit_human_task', restTask), 'duplicate_task');
      expect(viaMcp.existing_task_id).toBe(rest.task_id);
    });

    it('check_task_status: an unknown id is task_not_found, a missing one a field error', async () => {
      const unknown = await call(client, 'check_task_status', { task_id: 'task-2030-00000000000000000000000000000000' });
      expectRefusal(unknown, 'task_not_found');
      expect(texts(unknown)[1]).toMatch(/exact task_id returned by submit_human_task/);
      expect(expectRefusal(await call(client, 'check_task_status', {}), 'validation_failed').details).toEqual(['task_id is required']);
      expect(expectRefusal(await call(client, 'check_task_status', { task_id: 12 }), 'validation_failed').details).toEqual(['task_id must be a string']);
      expect(expectRefusal(await call(client, 'check_task_status', { task_id: 'x'.repeat(300) }), 'validation_failed').details).toEqual([
        'task_id must be at most 200 characters',
      ]);
    });

    it('message_human_operator: invalid fields and an undeliverable reply_to are refused', async () => {
      const result = await call(client, 'message_human_operator', { message: 'hi', from: 'y'.repeat(201) });
      const body = expectRefusal(result, 'validation_failed');
      expect(body.details).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^message must be between 5 and 5000 characters/),
          expect.stringMatching(/^reply_to is required/),
          expect.stringMatching(/^from must be at most 200 characters/),
        ]),
      );
      const nx = await call(client, 'message_human_operator', { message: 'A question about a task.', reply_to: 'me@nxdomain-agent.dev' });
      expect(expectRefusal(nx, 'validation_failed').details).toEqual([expect.stringMatching(/^reply_to .*does not exist/)]);
    });
  });

  describe('protocol faults', () => {
    it('an unknown tool is a JSON-RPC error (InvalidParams), not a tool result', async () => {
      const error = await client.callTool({ name: 'launch_rocket', arguments: {} }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
      expect((error as McpError).message).toMatch(/launch_rocket not found/);
    });

    it('arguments that are not an object are a JSON-RPC error from the SDK, not a tool result', async () => {
      const res = await rpc(t, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'check_task_status', arguments: 'task-1' } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { id: number; result?: unknown; error: { code: number; message: string } };
      expect(body.id).toBe(7);
      expect(body.result).toBeUndefined();
      // The SDK rejects the request shape before any tool runs (1.x reports it as InternalError).
      expect([ErrorCode.InvalidParams, ErrorCode.InternalError]).toContain(body.error.code);
      expect(body.error.message).toMatch(/arguments/);
    });

    it('an unknown method is MethodNotFound', async () => {
      const res = await rpc(t, { jsonrpc: '2.0', id: 8, method: 'prompts/list' });
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(ErrorCode.MethodNotFound);
    });

    it('JSON that is not JSON-RPC gets the SDK parse error', async () => {
      for (const body of [{ hello: 'world' }, null, [1, 2]]) {
        const res = await rpc(t, JSON.stringify(body));
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: ErrorCode.ParseError }, id: null });
      }
    });

    it('an unsupported MCP-Protocol-Version is refused by the transport', async () => {
      const res = await rpc(t, toolsCall('get_human_services'), { 'mcp-protocol-version': '1999-01-01' });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/Unsupported protocol version/);
    });

    it('a client that does not accept both JSON and an event stream gets 406 from the transport', async () => {
      const res = await rpc(t, toolsCall('get_human_services'), { accept: 'application/json' });
      expect(res.status).toBe(406);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/Not Acceptable/);
    });
  });

  describe('a body the guards refuse is a JSON-RPC parse error', () => {
    it('a NUL character in the body: -32700 with the contract code and details as data, no REST error body', async () => {
      const nul = JSON.stringify(toolsCall('check_task_status', { task_id: 'task-\u0000' }));
      expect(nul).toContain('\\u0000');
      const res = await rpc(t, nul);
      expect(res.status).toBe(400);
      const body = (await res.json()) as Json;
      expect(body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32700,
          message: expect.stringMatching(/^Parse error: /),
          data: { error: 'validation_failed', details: [expect.stringMatching(/must not contain NUL characters/)] },
        },
      });
      expect(body).not.toHaveProperty('message');
    });
  });

  describe('HTTP-level errors use the contract error body', () => {
    it('a body that is not JSON is 400 invalid_json', async () => {
      const res = await rpc(t, '{"jsonrpc": "2.0", "id": 1, "method": ');
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_json' });
    });

    it('an empty body is 400 invalid_json, with or without a content type', async () => {
      const typed = await fetch(`${t.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: MCP_ACCEPT } });
      expect(typed.status).toBe(400);
      expect(await typed.json()).toMatchObject({ error: 'invalid_json' });
      const bare = await fetch(`${t.url}/mcp`, { method: 'POST', headers: { accept: MCP_ACCEPT } });
      expect(bare.status).toBe(400);
      expect(await bare.json()).toMatchObject({ error: 'invalid_json' });
    });

    it('a body over 64 KB is 413 payload_too_large', async () => {
      const res = await rpc(t, toolsCall('submit_human_task', validTask({ description: 'x'.repeat(70 * 1024) })));
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ error: 'payload_too_large' });
    });

    it('a non-JSON content type is 415 unsupported_media_type', async () => {
      const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers: { 'content-type': 'text/plain', accept: MCP_ACCEPT }, body: '{}' });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ error: 'unsupported_media_type' });
    });

    it('GET, DELETE and PUT /mcp are 405 method_not_allowed with Allow: POST', async () => {
      for (const method of ['GET', 'DELETE', 'PUT']) {
        const res = await fetch(`${t.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
        expect(await res.json()).toMatchObject({ error: 'method_not_allowed' });
      }
    });
  });
});

describe.each(STORES)('MCP limits shared with REST on %s (production limits)', (store) => {
  const t = useTestApp({ store, limits: 'production' });
  const client = useMcpClient(t);

  it('2 REST + 1 MCP submissions use the 3/hour quota; the 4th is refused on both doors', async () => {
    for (let i = 0; i < 2; i++) expect((await postJson(`${t.url}/api/v1/tasks`, validTask())).status).toBe(202);
    const third = await call(client, 'submit_human_task', validTask());
    expect(third.isError).toBeFalsy();

    const fourth = await call(client, 'submit_human_task', validTask());
    const body = expectRefusal(fourth, 'rate_limited');
    expect(body.limit).toBe('tasks_per_hour');
    expect(body.retry_after_seconds).toEqual(expect.any(Number));
    expect(texts(fourth)[1]).toContain(`wait ${String(body.retry_after_seconds)} seconds`);

    const rest = await postJson(`${t.url}/api/v1/tasks`, validTask());
    expect(rest.status).toBe(429);
    expect(await rest.json()).toMatchObject({ error: 'rate_limited', limit: 'tasks_per_hour' });
  });

  it('the no-mailbox path is 1 task per client per day, and the hint offers e-mail delivery instead', async () => {
    const fresh = await startTestApp({ store, limits: 'production' });
    const freshClient = await connectClient(fresh);
    try {
      const { contact_email: _a, ...first } = validTask({ delivery: 'status_poll' });
      expect((await call(freshClient, 'submit_human_task', first)).isError).toBeFalsy();
      const { contact_email: _b, ...second } = validTask({ delivery: 'status_poll' });
      const refused = await call(freshClient, 'submit_human_task', second);
      expect(expectRefusal(refused, 'rate_limited').limit).toBe('status_poll_per_day');
      expect(texts(refused)[1]).toMatch(/contact_email with delivery "email"/);
    } finally {
      await freshClient.close();
      await fresh.close();
    }
  });

  it('a flood of MCP requests is refused at the HTTP level by the read limit', async () => {
    const flooded = await startTestApp({ store, env: { READ_LIMIT_PER_MINUTE: '2' } });
    try {
      expect((await rpc(flooded, toolsCall('get_human_services'))).status).toBe(200);
      expect((await rpc(flooded, toolsCall('get_human_services'))).status).toBe(200);
      const res = await rpc(flooded, toolsCall('get_human_services'));
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await res.json()).toMatchObject({ error: 'rate_limited', limit: 'reads_per_minute' });
    } finally {
      await flooded.close();
    }
  });

  it('messages share their quota with REST too', async () => {
    const message = (n: number) => ({ message: `Question number ${n} about scoping a task.`, reply_to: 'agent@mail.example-agent.dev' });
    expect((await postJson(`${t.url}/api/v1/messages`, message(1))).status).toBe(201);
    expect((await call(client, 'message_human_operator', message(2))).isError).toBeFalsy();
    expect((await postJson(`${t.url}/api/v1/messages`, message(3))).status).toBe(201);
    const body = expectRefusal(await call(client, 'message_human_operator', message(4)), 'rate_limited');
    expect(body.limit).toBe('messages_per_hour');
  });
});
