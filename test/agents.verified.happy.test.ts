import { describe, expect, it } from 'vitest';
import { envelope, MODERN } from './mcp.modern.support.js';
import { MCP_ACCEPT, toolsCall } from './mcp.support.js';
import { newAgent, type TestAgent, useCountedAgents } from './support/agents.js';
import { postJson, STORES, TEST_ADMIN_KEY, TestClock, validTask } from './support/app.js';

/**
 * Verified agents (docs/verified-agents.md): an agent signing its requests with Cloudflare's
 * web-bot-auth package against the real app. Its key is its client: its own limits (the verified
 * tier), apart from the unsigned requests of the same address and from another agent behind it.
 */

describe.each(STORES)('verified agents on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:20:00.000Z');
  const { t, keys, alice, bob } = useCountedAgents(store, clock);

  const sign = (agent: TestAgent, method: string, path: string) => keys.sign(agent, method, path, clock.now());
  const submit = async (agent: TestAgent | undefined, overrides: Record<string, unknown> = {}) =>
    postJson(`${t.url}/api/v1/tasks`, validTask(overrides), agent ? await sign(agent, 'POST', '/api/v1/tasks') : {});

  it('gives a signed agent the verified limits, apart from its address and from another agent', async () => {
    const first = await submit(alice);
    expect(first.status).toBe(202);
    expect(first.headers.get('ratelimit-policy')).toBe('20;w=3600;comment="verified", 100;w=86400;comment="verified"');
    expect(first.headers.get('ratelimit-remaining')).toBe('19');
    for (let i = 0; i < 19; i++) expect((await submit(alice)).status).toBe(202);
    const refused = await submit(alice);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('accept-signature')).toBeNull();
    expect(((await refused.json()) as { limit: string }).limit).toBe('tasks_per_hour');

    // The same address unsigned keeps its own three an hour.
    const unsigned = await submit(undefined);
    expect(unsigned.status).toBe(202);
    expect(unsigned.headers.get('ratelimit-policy')).toBe('3;w=3600;comment="address", 5;w=86400;comment="address"');
    expect(unsigned.headers.get('ratelimit-remaining')).toBe('2');

    // Another agent behind the same address is counted apart.
    const other = await submit(bob);
    expect(other.status).toBe(202);
    expect(other.headers.get('ratelimit-remaining')).toBe('19');
  });

  it('records the agent on the task for the operator, not in the public view', async () => {
    clock.set('2030-03-10T11:05:00.000Z');
    const res = await submit(bob);
    expect(res.status).toBe(202);
    const { task_id } = (await res.json()) as { task_id: string };
    const admin = (await (await fetch(`${t.url}/api/v1/admin/tasks/${task_id}`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } })).json()) as Record<
      string,
      unknown
    >;
    expect(admin.agent).toEqual({ key_id: bob.keyId, directory: keys.directory.host });
    const pub = (await (await fetch(`${t.url}/api/v1/tasks/${task_id}`)).json()) as Record<string, unknown>;
    expect(pub.agent).toBeUndefined();
  });

  const taskOf = async (id: string) => t.store.db.selectFrom('tasks').select(['agent_key_id', 'source']).where('id', '=', id).executeTakeFirstOrThrow();

  it('verifies on /mcp (2025-11-25): the tool call counts the key', async () => {
    clock.set('2030-03-10T12:05:00.000Z');
    const headers = await sign(alice, 'POST', '/mcp');
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, ...headers },
      body: JSON.stringify(toolsCall('submit_human_task', validTask())),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-policy')).toBe('600;w=60;comment="verified"');
    const called = (await res.json()) as { result: { structuredContent: { task_id: string } } };
    expect((await taskOf(called.result.structuredContent.task_id)).agent_key_id).toBe(alice.keyId);
  });

  it('verifies on /mcp (2026-07-28)', async () => {
    clock.set('2030-03-10T12:10:00.000Z');
    const headers = await sign(bob, 'POST', '/mcp');
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: MCP_ACCEPT,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'submit_human_task',
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'submit_human_task', arguments: validTask(), _meta: envelope(false) },
      }),
    });
    expect(res.status).toBe(200);
    const called = (await res.json()) as { result: { structuredContent: { task_id: string } } };
    expect((await taskOf(called.result.structuredContent.task_id)).agent_key_id).toBe(bob.keyId);
  });

  it('verifies a signed POST of the web form', async () => {
    clock.set('2030-03-10T12:15:00.000Z');
    const form = new URLSearchParams({
      task_type: 'real_world_verification',
      description: 'Check the opening hours of the library on Elm Street, signed please.',
      delivery: 'status_poll',
    });
    const res = await fetch(`${t.url}/tasks`, { method: 'POST', body: form, redirect: 'manual', headers: await sign(alice, 'POST', '/tasks') });
    expect(res.status).toBe(303);
    const id = new URL(res.headers.get('location') as string, t.url).searchParams.get('id') as string;
    expect(await taskOf(id)).toEqual({ agent_key_id: alice.keyId, source: 'web_form' });
  });

  it('counts a signed read by the key, under the verified read policy', async () => {
    const res = await fetch(`${t.url}/api/v1/services`, { headers: await sign(alice, 'GET', '/api/v1/services') });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-policy')).toBe('600;w=60;comment="verified"');
  });

  it("invites an unsigned client's 429 to sign (Accept-Signature)", async () => {
    clock.set('2030-03-10T13:05:00.000Z');
    const client = { 'x-forwarded-for': '203.0.113.9' };
    for (let i = 0; i < 3; i++) expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), client)).status).toBe(202);
    const refused = await postJson(`${t.url}/api/v1/tasks`, validTask(), client);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('accept-signature')).toBe('sig1=("@authority" "signature-agent");tag="web-bot-auth";alg="ed25519"');
    expect(refused.headers.get('access-control-expose-headers')).toContain('Accept-Signature');
  });

  it('auto-blocks a key that keeps going after its limit, by key', async () => {
    clock.set('2030-03-10T14:05:00.000Z');
    const carol = await newAgent();
    keys.directory.agents.push(carol);
    clock.advance(61_000);
    for (let i = 0; i < 20; i++) expect((await submit(carol)).status).toBe(202);
    for (let i = 0; i < 10; i++) expect((await submit(carol)).status).toBe(429);
    expect((await submit(carol)).status).toBe(403);
    const list = (await (await fetch(`${t.url}/api/v1/admin/blocklist`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } })).json()) as {
      blocklist: { kind: string; value: string; source: string }[];
    };
    expect(list.blocklist).toContainEqual(expect.objectContaining({ kind: 'agent_key', value: carol.keyId, source: 'auto' }));
    // Its address and the other agents go on.
    expect((await submit(bob)).status).toBe(202);
  });
});
