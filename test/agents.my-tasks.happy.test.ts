import { beforeAll, describe, expect, it } from 'vitest';
import { call, connectClient } from './mcp.support.js';
import { AGENTS_ENV, type TestAgent, useAgents } from './support/agents.js';
import { postJson, STORES, TEST_ADMIN_KEY, TestClock, useTestApp, validTask } from './support/app.js';
import { planProblems } from './support/plans.js';

/**
 * "My tasks" without an account (docs/verified-agents.md): GET /api/v1/tasks and MCP
 * list_my_tasks answer a verified agent its own tasks, newest update first, a page at a time;
 * unsigned, 400 signature_required.
 */

describe.each(STORES)('my tasks on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const seen = new Map<string, readonly unknown[]>();
  let capturing = false;
  const t = useTestApp({
    store,
    clock,
    env: AGENTS_ENV,
    onQuery: (query) => {
      if (capturing) seen.set(query.sql, query.parameters);
    },
  });
  const keys = useAgents(2);
  const [agent, other] = keys.agents as [TestAgent, TestAgent];
  const mine: string[] = [];

  beforeAll(async () => {
    for (let batch = 0; batch < 10; batch++) {
      clock.advance(1000);
      const ids = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const headers = await keys.sign(agent, 'POST', '/api/v1/tasks', clock.now());
          const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }), headers);
          expect(res.status).toBe(202);
          return ((await res.json()) as { task_id: string }).task_id;
        }),
      );
      mine.push(...ids);
    }
    const headers = await keys.sign(other, 'POST', '/api/v1/tasks', clock.now());
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), headers)).status).toBe(202);
  }, 120_000);

  const list = async (who: TestAgent, query: string) => {
    const path = `/api/v1/tasks${query}`;
    return fetch(`${t.url}${path}`, { headers: await keys.sign(who, 'GET', path, clock.now()) });
  };

  it('pages through 500 tasks, newest update first, each once', async () => {
    // One task moves: it comes first.
    clock.advance(1000);
    const moved = mine[0] as string;
    const patch = await fetch(`${t.url}/api/v1/tasks/${moved}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'accepted' }),
    });
    expect(patch.status).toBe(200);
    const listed: { task_id: string; updated_at: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    capturing = true;
    do {
      const res = await list(agent, `?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('1000000;w=60;comment="verified"');
      expect(res.headers.get('ratelimit-remaining')).not.toBeNull();
      const page = (await res.json()) as { tasks: { task_id: string; updated_at: string; contact_email?: string }[]; next_cursor: string | null };
      listed.push(...page.tasks);
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null);
    capturing = false;
    expect(pages).toBe(5);
    expect(listed).toHaveLength(500);
    expect(new Set(listed.map((s) => s.task_id))).toEqual(new Set(mine));
    expect(listed[0]?.task_id).toBe(moved);
    // Each page reads its own rows down the agent's index, whatever the history.
    const problems = await planProblems(t, seen);
    expect(problems, problems.join('\n')).toEqual([]);
    const order = listed.map((s) => s.updated_at);
    expect([...order].sort().reverse()).toEqual(order);
  });

  it('filters by status and keeps each agent to its own', async () => {
    const accepted = (await (await list(agent, '?status=accepted')).json()) as { tasks: { task_id: string }[] };
    expect(accepted.tasks.map((task) => task.task_id)).toEqual([mine[0]]);
    const others = (await (await list(other, '')).json()) as { tasks: unknown[]; next_cursor: string | null };
    expect(others.tasks).toHaveLength(1);
    expect(others.next_cursor).toBeNull();
  });

  it("refuses another agent's cursor and a malformed query", async () => {
    const first = (await (await list(agent, '?limit=1')).json()) as { next_cursor: string };
    const stolen = await list(other, `?cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(stolen.status).toBe(400);
    expect(((await stolen.json()) as { error: string }).error).toBe('invalid_cursor');
    const bad = await list(agent, '?limit=1000');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe('malformed_request');
  });

  it('answers an unsigned request 400 signature_required, on REST and MCP', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks`);
    expect(res.status).toBe(400);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect(((await res.json()) as { error: string }).error).toBe('signature_required');
    const client = await connectClient(t);
    const result = await call(client, 'list_my_tasks', {});
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toBe('signature_required');
    await client.close();
  });

  it('answers list_my_tasks to a signed /mcp request', async () => {
    const headers = await keys.sign(other, 'POST', '/mcp', clock.now());
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_my_tasks', arguments: { limit: 5 } } }),
    });
    const body = (await res.json()) as { result: { structuredContent: { tasks: unknown[] } } };
    expect(body.result.structuredContent.tasks).toHaveLength(1);
  });
});
