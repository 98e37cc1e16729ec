import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Json, rawPost, rpc, TOOL_NAMES, texts, toolsCall, useMcpClient } from './mcp.support.js';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, useTestApp, validTask } from './support/app.js';

const PUBLIC_BASE = 'https://tasks.example-operator.dev';
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

function json(body: string): Json {
  return JSON.parse(body) as Json;
}

describe.each(STORES)('MCP host validation (DNS rebinding) on %s', (store) => {
  let proxied: TestApp;
  const t = useTestApp({ store, env: { BASE_URL: PUBLIC_BASE } });
  beforeAll(async () => {
    proxied = await startTestApp({ store, env: { BASE_URL: PUBLIC_BASE, TRUST_PROXY: '1' } });
  });
  afterAll(async () => {
    await proxied?.close();
  });

  it('answers requests addressed to BASE_URL host, in any letter case and with the default port spelled out', async () => {
    for (const host of ['tasks.example-operator.dev', 'TASKS.Example-Operator.dev', 'tasks.example-operator.dev:443']) {
      const res = await rawPost(t, '/mcp', LIST, { host });
      expect(res.status, host).toBe(200);
      expect((json(res.body).result as { tools: unknown[] }).tools).toHaveLength(TOOL_NAMES.length);
    }
  });

  it('refuses a foreign Host with 403 forbidden saying the Host does not name this server', async () => {
    const task = validTask();
    for (const host of ['evil.example-attacker.dev', 'tasks.example-operator.dev:8443', 'tasks.example-operator.dev.evil.example-attacker.dev', '127.0.0.1']) {
      const res = await rawPost(t, '/mcp', toolsCall('submit_human_task', task), { host });
      expect(res.status, host).toBe(403);
      const body = json(res.body);
      expect(body.error).toBe('forbidden');
      expect((body.details as string[])[0]).toMatch(/Host header .* is not "tasks\.example-operator\.dev"/);
    }
    // None of the refused calls filed the task: filing it now is not a duplicate.
    const res = await rawPost(t, '/mcp', toolsCall('submit_human_task', task), { host: 'tasks.example-operator.dev' });
    expect(json(res.body).result).toMatchObject({ structuredContent: { status: 'submitted' } });
  });

  it('ignores X-Forwarded-Host unless the proxy is trusted (TRUST_PROXY)', async () => {
    const spoofed = await rawPost(t, '/mcp', LIST, { host: 'evil.example-attacker.dev', 'x-forwarded-host': 'tasks.example-operator.dev' });
    expect(spoofed.status).toBe(403);
    const behindProxy = await rawPost(proxied, '/mcp', LIST, { host: '10.0.0.5:8080', 'x-forwarded-host': 'tasks.example-operator.dev' });
    expect(behindProxy.status).toBe(200);
    const rebound = await rawPost(proxied, '/mcp', LIST, { host: '10.0.0.5:8080', 'x-forwarded-host': 'evil.example-attacker.dev' });
    expect(rebound.status).toBe(403);
  });

  it('keeps cross-origin browser clients working: Origin is not a reason to refuse, and CORS headers are sent', async () => {
    const res = await rawPost(t, '/mcp', LIST, { host: 'tasks.example-operator.dev', origin: 'https://agent-console.example-agent.dev' });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it('lets a browser preflight POST /mcp with the MCP headers', async () => {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://agent-console.example-agent.dev',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, accept, mcp-protocol-version',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toMatch(/mcp-protocol-version/);
  });

  it('checks Host and Origin when BASE_URL is a loopback name: loopback names only, any port (GHSA-w48q-cv73-mx4w)', async () => {
    const local = await startTestApp({ store, env: { BASE_URL: 'http://localhost:8080' } });
    try {
      for (const host of ['localhost:8080', 'localhost', '127.0.0.1:9999', '[::1]:8080', 'LOCALHOST.']) {
        expect((await rawPost(local, '/mcp', LIST, { host })).status, host).toBe(200);
      }
      for (const origin of ['http://localhost:5173', 'http://127.0.0.1:8080', 'https://[::1]']) {
        expect((await rawPost(local, '/mcp', LIST, { host: 'localhost:8080', origin })).status, origin).toBe(200);
      }
      const refusedHosts = ['evil.example', 'localhost.evil.example', '127.0.0.1.nip.io', 'my-laptop.lan', '[::ffff:7f00:1]', '[fe80::1]', '127.0.0.2'];
      for (const host of refusedHosts) {
        const res = await rawPost(local, '/mcp', LIST, { host });
        expect(res.status, host).toBe(403);
        expect(json(res.body)).toMatchObject({ error: 'forbidden' });
      }
      const refusedOrigins = ['http://evil.example', 'http://localhost.evil.example', 'http://127.0.0.1.nip.io', 'http://[::ffff:7f00:1]', 'null', 'file://'];
      for (const origin of refusedOrigins) {
        const res = await rawPost(local, '/mcp', LIST, { host: 'localhost:8080', origin });
        expect(res.status, origin).toBe(403);
        expect(json(res.body)).toMatchObject({ error: 'forbidden' });
      }
    } finally {
      await local.close();
    }
  });

  it("serves the names of ALLOWED_HOSTS besides BASE_URL's host, and nothing else", async () => {
    const extra = await startTestApp({
      store,
      env: { BASE_URL: 'https://tasks.example-operator.dev', ALLOWED_HOSTS: 'mcp.example-operator.dev, Internal.Example-Operator.dev' },
    });
    try {
      for (const host of ['tasks.example-operator.dev', 'mcp.example-operator.dev', 'internal.example-operator.dev:8080']) {
        expect((await rawPost(extra, '/mcp', LIST, { host })).status, host).toBe(200);
      }
      for (const host of ['evil.example', 'mcp.example-operator.dev.evil.example', 'localhost']) {
        expect((await rawPost(extra, '/mcp', LIST, { host })).status, host).toBe(403);
      }
    } finally {
      await extra.close();
    }
  });
});

describe.each(STORES)('MCP tool safety on %s', (store) => {
  const t = useTestApp({ store });
  const client = useMcpClient(t);

  it('never returns the contact e-mail or reply_to, in structured content or text', async () => {
    const email = 'private.person@mail.example-agent.dev';
    const submitted = await call(client, 'submit_human_task', validTask({ contact_email: email }));
    const status = await call(client, 'check_task_status', { task_id: submitted.structuredContent.task_id });
    const message = await call(client, 'message_human_operator', { message: 'About my task, please call back.', reply_to: email });
    for (const result of [submitted, status, message]) {
      expect(JSON.stringify(result)).not.toContain(email);
    }
  });

  it('applies the blocklist to MCP callers exactly as to REST callers', async () => {
    const block = await postJson(
      `${t.url}/api/v1/admin/blocklist`,
      { kind: 'requester', value: 'Blocked MCP Bot', reason: 'test' },
      { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    );
    expect(block.status).toBe(201);
    const result = await call(client, 'submit_human_task', validTask({ requester: 'blocked mcp bot' }));
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toBe('client_blocked');
    expect(texts(result)[1]).toMatch(/^Hint: .*blocked/);
    const rest = await postJson(`${t.url}/api/v1/tasks`, validTask({ requester: 'blocked mcp bot' }));
    expect(rest.status).toBe(403);
    expect(await rest.json()).toEqual(result.structuredContent);
  });

  it('reports a store that went away as service_unavailable without internals', async () => {
    const broken = await startTestApp({ store });
    try {
      // The store goes away under the running app: the tool must fail cleanly.
      await broken.store.close();
      const res = await rpc(broken, toolsCall('check_task_status', { task_id: 'task-2030-00000000000000000000000000000000' }));
      expect(res.status).toBe(200);
      const result = ((await res.json()) as { result: { isError: boolean; structuredContent: Json } }).result;
      expect(result.isError).toBe(true);
      expect(result.structuredContent.error).toBe('service_unavailable');
      expect(result.structuredContent.message).toMatch(/^The service's store is not answering \([\w ]+\)\. Retry after 5 seconds\.$/);
      expect(JSON.stringify(result)).not.toMatch(/sqlite|postgres|pool|database|stack/i);
    } finally {
      await broken.close().catch(() => undefined);
    }
  });

  it('serves the server card without internals: only public URLs and the tools', async () => {
    const card = (await (await fetch(`${t.url}/.well-known/mcp`)).json()) as Json;
    const text = JSON.stringify(card);
    for (const secret of [TEST_ADMIN_KEY, t.config.databaseUrl, t.dataDir, t.deps.secret.toString('base64'), '/api/v1/admin']) {
      expect(text).not.toContain(secret);
    }
    expect((card.tools as Json[]).map((tool) => tool.name)).toEqual(TOOL_NAMES);
  });
});
