import { describe, expect, it } from 'vitest';
import { publicLimits } from '../src/docs/limits.js';
import { TASK_TYPES } from '../src/domain/tasks/task.js';
import { call, type Json, rpc, TOOL_NAMES, texts, toolsCall, useMcpClient } from './mcp.support.js';
import { postJson, STORES, useTestApp, validTask } from './support/app.js';

describe.each(STORES)('MCP tool server on %s', (store) => {
  const t = useTestApp({ store });
  const client = useMcpClient(t);

  it('introduces itself at initialize with the service name, version and instructions', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'human-task-service', version: t.deps.version });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toMatch(/get_human_services/);
  });

  it('lists exactly the tools, with input schemas from the REST source and output schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(100);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    const submit = tools.find((tool) => tool.name === 'submit_human_task')!;
    const props = submit.inputSchema.properties as Record<string, Json>;
    expect(submit.inputSchema.required).toEqual(['task_type', 'description']);
    expect(props.task_type?.enum).toEqual([...TASK_TYPES]);
    expect(props.description).toMatchObject({ type: 'string', minLength: t.config.limits.descriptionMin, maxLength: t.config.limits.descriptionMax });
    expect(props.location_detail).toMatchObject({ maxLength: t.config.limits.locationDetailMax });
    expect(Object.keys(props)).toEqual(
      expect.arrayContaining(['contact_email', 'delivery', 'deadline', 'output_format', 'requester', 'budget_usd', 'idempotency_key']),
    );
    // Descriptions tell a model the call is asynchronous, what is refused and how to poll.
    expect(submit.description).toMatch(/Asynchronous/);
    expect(submit.description).toMatch(/status_poll/);
    // What review rejects comes from the operator's profile, so an edited policy reaches the model.
    for (const rule of t.deps.profile.policy.will_not_do) expect(submit.description).toContain(rule);
    expect(tools.find((tool) => tool.name === 'check_task_status')!.description).toMatch(/every few minutes/);

    const message = tools.find((tool) => tool.name === 'message_human_operator')!;
    expect(message.inputSchema.required).toEqual(['message', 'reply_to']);
    const status = tools.find((tool) => tool.name === 'check_task_status')!;
    expect(status.inputSchema.required).toEqual(['task_id']);
    // The success branch of each output schema is the REST response schema.
    const success = (submit.outputSchema?.anyOf as Json[])[0]!;
    expect(success.required).toEqual(expect.arrayContaining(['task_id', 'status', 'created_at', 'status_url', 'status_page', 'message']));
  });

  it('get_human_services returns the catalog, the operator, the policy and the running limits', async () => {
    const result = await call(client, 'get_human_services');
    expect(result.isError).toBeFalsy();
    const body = result.structuredContent;
    expect(JSON.parse(texts(result)[0]!)).toEqual(body);
    expect(body.services).toEqual(t.deps.catalog);
    expect(body.operator).toEqual(t.deps.profile.operator);
    expect(body.policy).toEqual(t.deps.profile.policy);
    expect(body.limits).toEqual(publicLimits(t.config));
    expect(body.task_types).toEqual([...TASK_TYPES]);
    expect((body.how_to as Json).poll).toMatch(/every few minutes/);
    expect((body.endpoints as Json).mcp).toBe(`${t.config.baseUrl}/mcp`);
  });

  it('submit_human_task files a task that REST then shows', async () => {
    const result = await call(client, 'submit_human_task', validTask({ requester: 'mcp-agent (test)' }));
    expect(result.isError).toBeFalsy();
    const body = result.structuredContent;
    expect(body.task_id).toMatch(/^task-\d{4}-[0-9a-f]{32}$/);
    expect(body.status).toBe('submitted');
    expect(body.status_url).toBe(`${t.config.baseUrl}/api/v1/tasks/${String(body.task_id)}`);
    expect(body.status_page).toBe(`${t.config.baseUrl}/tasks?id=${String(body.task_id)}`);
    expect(JSON.parse(texts(result)[0]!)).toEqual(body);

    const res = await fetch(`${t.url}/api/v1/tasks/${String(body.task_id)}`);
    expect(res.status).toBe(200);
    const task = (await res.json()) as Json;
    expect(task).toMatchObject({ task_id: body.task_id, status: 'submitted', requester: 'mcp-agent (test)', source: 'api' });
    expect(task).not.toHaveProperty('contact_email');
  });

  it('check_task_status returns exactly what REST returns for a task submitted over REST', async () => {
    const submitted = (await (await postJson(`${t.url}/api/v1/tasks`, validTask())).json()) as Json;
    const result = await call(client, 'check_task_status', { task_id: submitted.task_id });
    expect(result.isError).toBeFalsy();
    const rest = (await (await fetch(`${t.url}/api/v1/tasks/${String(submitted.task_id)}`)).json()) as Json;
    expect(result.structuredContent).toEqual(rest);
    expect(result.structuredContent).not.toHaveProperty('contact_email');
    expect(JSON.parse(texts(result)[0]!)).toEqual(rest);
  });

  it('warns about unknown arguments the same way REST does', async () => {
    const result = await call(client, 'submit_human_task', validTask({ colour: 'blue' }));
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.warnings).toEqual(['unknown field "colour" was ignored']);
  });

  it('submit_human_task accepts the no-mailbox path (delivery status_poll, no contact_email)', async () => {
    const { contact_email: _omitted, ...task } = validTask({ delivery: 'status_poll' });
    const result = await call(client, 'submit_human_task', task);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.message).toMatch(/operator_notes/);
  });

  it('idempotency_key replays the original answer instead of filing a second task', async () => {
    const task = validTask();
    const first = await call(client, 'submit_human_task', { ...task, idempotency_key: 'mcp-key-0001' });
    const again = await call(client, 'submit_human_task', { ...task, idempotency_key: 'mcp-key-0001' });
    expect(first.isError).toBeFalsy();
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toEqual(first.structuredContent);
    // The same key is also the REST Idempotency-Key of the same client.
    const rest = await postJson(`${t.url}/api/v1/tasks`, task, { 'idempotency-key': 'mcp-key-0001' });
    expect(rest.status).toBe(202);
    expect(((await rest.json()) as Json).task_id).toBe(first.structuredContent.task_id);
  });

  it('message_human_operator sends a message to the operator', async () => {
    const result = await call(client, 'message_human_operator', {
      message: 'Can you verify shop opening hours in Springfield next week?',
      reply_to: 'agent@mail.example-agent.dev',
      from: 'mcp-agent',
      subject: 'Scoping question',
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.message_id).toMatch(/^msg-\d{4}-[0-9a-f]{32}$/);
    expect(result.structuredContent.message).toMatch(/reply_to/);
    expect(result.structuredContent).not.toHaveProperty('reply_to');
  });

  it('answers tools/list and tools/call from a client that never sent initialize', async () => {
    const list = await rpc(t, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toMatch(/application\/json/);
    expect(list.headers.get('mcp-session-id')).toBeNull();
    const listed = (await list.json()) as { result: { tools: { name: string }[] } };
    expect(listed.result.tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);

    const res = await rpc(t, toolsCall('submit_human_task', validTask()), { 'mcp-protocol-version': '2025-06-18' });
    expect(res.status).toBe(200);
    const called = (await res.json()) as { result: { structuredContent: Json; isError?: boolean } };
    expect(called.result.isError).toBeFalsy();
    expect(called.result.structuredContent.status).toBe('submitted');

    const status = await rpc(t, toolsCall('check_task_status', { task_id: called.result.structuredContent.task_id }));
    expect(((await status.json()) as { result: { structuredContent: Json } }).result.structuredContent.task_id).toBe(called.result.structuredContent.task_id);
  });

  it('answers a JSON-RPC batch, and notifications alone with 202', async () => {
    const batch = await rpc(t, [{ jsonrpc: '2.0', id: 'a', method: 'tools/list' }, toolsCall('get_human_services')]);
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as { id: unknown; result: Json }[];
    expect(answers).toHaveLength(2);
    expect(answers.find((a) => a.id === 'a')?.result.tools).toHaveLength(TOOL_NAMES.length);

    const note = await rpc(t, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).toBe(202);
  });

  it('keeps the app-wide headers (CORS, request id) on MCP responses for browser clients', async () => {
    // The test app's BASE_URL is a loopback name, so a browser origin must be local too (rebinding protection).
    const res = await rpc(t, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { origin: 'http://localhost:5173' });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    // Each POST /mcp is a read for flood control, and says so like every response.
    expect(res.headers.get('ratelimit-policy')).toBe(`${t.config.limits.readsPerMinute};w=60;comment="address"`);
  });

  it('serves the server card at /.well-known/mcp and /mcp/server-card', async () => {
    const { tools } = await client.listTools();
    for (const path of ['/.well-known/mcp', '/mcp/server-card', '/.well-known/mcp/server-card.json']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const card = (await res.json()) as Json;
      expect(card).toMatchObject({
        name: expect.stringMatching(/^[a-z0-9.-]+\/human-task-service$/),
        version: t.deps.version,
        remotes: [{ type: 'streamable-http', url: `${t.config.baseUrl}/mcp` }],
        authentication: { required: false },
      });
      expect(typeof card.description).toBe('string');
      expect(card.tools).toEqual(JSON.parse(JSON.stringify(tools)));
    }
  });
});
