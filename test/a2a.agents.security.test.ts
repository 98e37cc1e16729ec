import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aClient, BINDINGS, sendRequest, taskOf, uniqueDescription } from './a2a.support.js';
import { type DirectoryServer, newAgent, signedHeaders, startDirectory, type TestAgent } from './support/agents.js';
import { postJson, STORES, TEST_ADMIN_KEY, TestClock, useTestApp } from './support/app.js';

/**
 * Who may see what on the A2A door (docs/a2a.md "Listing and agents"): signatures are verified
 * here as on every door, a verified agent lists its own tasks and nobody else's, an unsigned
 * caller lists nothing without a context, a page token serves only the list it was issued for, a
 * signature that does not verify and the read limit are refused in the JSON-RPC envelope.
 */

type Json = Record<string, unknown>;
const BASE = 'http://localhost:8080';

describe.each(STORES)('A2A and verified agents on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true', BASE_URL: BASE } });
  let directory: DirectoryServer;
  let alice: TestAgent;
  let bob: TestAgent;
  beforeAll(async () => {
    alice = await newAgent();
    bob = await newAgent();
    directory = await startDirectory([alice, bob]);
  });
  afterAll(async () => directory.close());

  const as = (agent: TestAgent) => async () => signedHeaders(agent, directory.url, BASE, 'POST', '/a2a', clock.now());
  const list = (contextId = '', pageToken = '', pageSize?: number) => ({
    tenant: '',
    contextId,
    status: 0,
    pageSize,
    pageToken,
    historyLength: undefined,
    statusTimestampAfter: undefined,
    includeArtifacts: undefined,
  });

  it.each(BINDINGS)('lists a verified agent its own tasks only, unsigned callers none, and keeps page tokens to their list (%s)', async (binding) => {
    const mine: string[] = [];
    const aliceClient = await a2aClient(t, binding, as(alice));
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      mine.push(taskOf(await aliceClient.sendMessage(sendRequest({ text: uniqueDescription() }))).id as string);
    }
    const bobClient = await a2aClient(t, binding, as(bob));
    const bobs = taskOf(await bobClient.sendMessage(sendRequest({ text: uniqueDescription() }))).id as string;
    const unsigned = await a2aClient(t, binding);
    await unsigned.sendMessage(sendRequest({ text: uniqueDescription() }));

    // The submission is the agent's: the admin view names its key.
    const view = (await (await fetch(`${t.url}/api/v1/admin/tasks/${mine[0]}`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } })).json()) as Json;
    expect(view.agent).toMatchObject({ key_id: alice.keyId });

    const first = await aliceClient.listTasks(list('', '', 2));
    expect(first.tasks.map((task) => task.id)).toEqual([mine[2], mine[1]]);
    expect(first.nextPageToken).not.toBe('');
    const second = await aliceClient.listTasks(list('', first.nextPageToken, 2));
    expect(second.tasks.map((task) => task.id)).toEqual(expect.arrayContaining([mine[0]]));
    expect(second.tasks.map((task) => task.id)).not.toContain(bobs);
    // Another agent cannot continue Alice's list with her token.
    await expect(bobClient.listTasks(list('', first.nextPageToken, 2))).rejects.toThrow();
    // Unsigned, without a context: nothing.
    expect((await unsigned.listTasks(list())).tasks).toEqual([]);
  });

  it('refuses a signature that does not verify in the JSON-RPC envelope (400 invalid_signature)', async () => {
    const headers = await signedHeaders(alice, directory.url, BASE, 'POST', '/a2a', clock.now());
    const tampered = { ...headers, signature: headers.signature.replace(/:(.)/, (_m, c: string) => `:${c === 'A' ? 'B' : 'A'}`) };
    const res = await postJson(`${t.url}/a2a`, { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }, { ...tampered, 'a2a-version': '1.0' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32602, data: { error: 'invalid_signature', details: [expect.stringMatching(/^signature: /)] } },
    });
  });

  it('never shows the contact e-mail or the callback URL of a task', async () => {
    const client = await a2aClient(t, 'JSONRPC');
    const task = taskOf(
      await client.sendMessage(
        sendRequest({
          text: uniqueDescription(),
          data: { contact_email: 'agent@mail.example-agent.dev', callback_url: 'https://hooks.example-agent.dev/a2a' },
        }),
      ),
    );
    const text = JSON.stringify(task);
    expect(text).not.toContain('agent@mail.example-agent.dev');
    expect(text).not.toContain('hooks.example-agent.dev');
  });
});

describe('A2A held requests and callers that go away', () => {
  const t = useTestApp({ store: 'sqlite' });

  it('releases a blocking send and a stream on the server as soon as their caller disconnects', async () => {
    const text = uniqueDescription();
    const answer = await postJson(
      `${t.url}/a2a`,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'held-1', role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } },
      },
      { 'a2a-version': '1.0' },
    );
    const id = (((await answer.json()) as Json).result as { task: { id: string } }).task.id;
    const before = t.deps.waits.size;
    const aborts = [new AbortController(), new AbortController()];
    const bodies = [
      { jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id } },
      // The same message again, blocking: the task it created, held until final.
      { jsonrpc: '2.0', id: 3, method: 'SendMessage', params: { message: { messageId: 'held-1', role: 'ROLE_USER', parts: [{ text }] } } },
    ];
    const pending = bodies.map((body, i) =>
      fetch(`${t.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify(body),
        signal: aborts[i]?.signal,
      }).then(
        (res) => res.body?.getReader().read(),
        () => undefined,
      ),
    );
    // The stream answers its Task at once; both are then held.
    await expect.poll(() => t.deps.waits.size, { timeout: 5000 }).toBe(before + 2);
    for (const abort of aborts) abort.abort();
    await Promise.allSettled(pending);
    await expect.poll(() => t.deps.waits.size, { timeout: 5000 }).toBe(before);
  });
});

describe('A2A and the read limit', () => {
  const t = useTestApp({ store: 'sqlite', limits: 'production', env: { READ_LIMIT_PER_MINUTE: '3' } });

  it('answers a request over the read limit as JSON-RPC -32050 with retry_after_seconds and Retry-After', async () => {
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await postJson(`${t.url}/a2a`, { jsonrpc: '2.0', id: i, method: 'GetExtendedAgentCard', params: {} }, { 'a2a-version': '1.0' });
    }
    expect(last?.status).toBe(429);
    expect(last?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await last?.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32050, data: { error: 'rate_limited', retry_after_seconds: expect.any(Number) } },
    });
  });
});
