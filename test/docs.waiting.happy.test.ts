import { describe, expect, it } from 'vitest';
import { getJson, getText, type Json } from './docs.support.js';
import { connectClient } from './mcp.support.js';
import { useTestApp } from './support/app.js';

/** Every document tells an agent how to wait for a result instead of polling (issue 11, part 5). */
describe('documents: how to wait', () => {
  const t = useTestApp();

  it('OpenAPI describes ETag, If-None-Match, Prefer, Preference-Applied and 304 on the status read', async () => {
    const doc = await getJson(t, '/openapi.json');
    const op = ((doc.paths as Json)['/api/v1/tasks/{task_id}'] as Json).get as Json;
    const params = (op.parameters as Json[]).map((p) => `${String(p.in)}:${String(p.name)}`);
    expect(params).toEqual(expect.arrayContaining(['header:If-None-Match', 'header:Prefer']));
    const shared = (doc.components as Json).responses as Record<string, Json>;
    const responses = Object.fromEntries(
      Object.entries(op.responses as Record<string, Json>).map(([code, r]) => [
        code,
        typeof r.$ref === 'string' ? (shared[r.$ref.split('/').pop() as string] as Json) : r,
      ]),
    );
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['200', '304', '404', '429']));
    for (const code of ['200', '304']) {
      const headers = responses[code]?.headers as Json;
      expect(Object.keys(headers), code).toEqual(expect.arrayContaining(['ETag', 'Preference-Applied', 'RateLimit-Remaining']));
      expect(responses[code]?.content === undefined, code).toBe(code === '304');
    }
    expect(((doc.components as Json).headers as Json)['Preference-Applied']).toBeTruthy();
    expect(String(op.description)).toMatch(/Prefer: wait=N/);
  });

  it('llms.txt, api.md and the index say how to wait in plain sentences', async () => {
    for (const path of ['/llms.txt', '/api.md', '/index.md']) {
      const { status, text } = await getText(t, path);
      expect(status, path).toBe(200);
      expect(text, path).toMatch(/Waiting for a result/);
      expect(text, path).toMatch(/If-None-Match/);
      expect(text, path).toMatch(/Prefer: wait=60/);
      expect(text, path).toMatch(/wait_seconds/);
      expect(text, path).toMatch(/tasks\/result/);
    }
  });

  it('/agent.json carries a waiting block', async () => {
    const manifest = await getJson(t, '/agent.json');
    const waiting = manifest.waiting as Json;
    expect((waiting.rest as Json).request_headers).toMatchObject({ Prefer: 'wait=<1-60>' });
    expect(((waiting.mcp as Json).check_task_status as Json).wait_seconds).toBe('0-50');
    expect((waiting.guide as string[]).join(' ')).toMatch(/long-poll/);
    expect(JSON.stringify(manifest.how_it_works)).toMatch(/Prefer: wait=60/);
  });

  it('the MCP server card and the tool descriptions say how to wait', async () => {
    const card = await getJson(t, '/.well-known/mcp');
    expect((card.capabilities as Json).tasks).toEqual({ requests: { tools: { call: {} } }, cancel: {} });
    expect(String(card.waiting)).toMatch(/wait_seconds/);
    expect(String(card.waiting)).toMatch(/as a task/);
    const client = await connectClient(t);
    try {
      const { tools } = await client.listTools();
      const status = tools.find((tool) => tool.name === 'check_task_status');
      expect(status?.description).toMatch(/wait_seconds/);
      expect(Object.keys((status?.inputSchema.properties ?? {}) as Json)).toEqual(['task_id', 'wait_seconds', 'known_updated_at']);
      expect(tools.find((tool) => tool.name === 'submit_human_task')?.description).toMatch(/as a task/);
      expect(client.getInstructions()).toMatch(/wait_seconds/);
    } finally {
      await client.close();
    }
  });
});
