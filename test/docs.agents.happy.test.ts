import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from './mcp.support.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';

/**
 * Issue 14: what an agent that only read llms.txt needs to know, in the llms.txt structure;
 * examples that the service itself accepts; no deployer instruction shown to agents; MCP tool
 * schemas that typed clients accept; wording.
 */

type Json = Record<string, unknown>;

describe.each(STORES)('documents for agents on %s', (store) => {
  const t = useTestApp({ store, limits: 'production', env: { TRUST_PROXY: '1' } });
  let llms: string;
  beforeAll(async () => {
    llms = await (await fetch(`${t.url}/llms.txt`)).text();
  });

  it('llms.txt has the llms.txt structure: H1, blockquote summary, then H2 sections of links', () => {
    const lines = llms.split('\n');
    expect(lines[0]).toMatch(/^# \S/);
    expect(lines.slice(1).find((l) => l.trim() !== '')).toMatch(/^> \S/);
    const firstH2 = lines.findIndex((l) => l.startsWith('## '));
    expect(firstH2).toBeGreaterThan(2);
    // Before the first H2: paragraphs only, no headings.
    expect(lines.slice(1, firstH2).some((l) => l.startsWith('#'))).toBe(false);
    const sections = new Map<string, string[]>();
    let current = '';
    for (const line of lines.slice(firstH2)) {
      if (line.startsWith('## ')) {
        current = line.slice(3);
        sections.set(current, []);
      } else if (line.trim() !== '') sections.get(current)?.push(line);
    }
    expect([...sections.keys()]).toEqual(expect.arrayContaining(['API', 'Rules', 'Waiting for a result', 'Verify a receipt', 'Documents', 'Optional']));
    for (const [name, items] of sections) {
      expect(items.length, name).toBeGreaterThan(0);
      // Issue 18's Clients section names packages in the service's source, which have no URL.
      if (name === 'Clients') continue;
      for (const item of items) expect(item, `${name}: ${item}`).toMatch(/^- \[[^\]]+\]\([^)\s]+\)(: .+)?$/);
    }
  });

  it('llms.txt names every public API route an agent can call, with its method (issue 51: the cancel route was missing)', async () => {
    const openapi = (await (await fetch(`${t.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(openapi.paths)) {
      if (!path.startsWith('/api/v1/') || path.includes('/admin') || path.startsWith('/api/v1/health')) continue;
      // The operator's own routes (the admin key) are not for agents.
      const forAgents = Object.entries(operations).filter(([, op]) => !((op as { tags?: string[] }).tags ?? []).includes('admin'));
      if (forAgents.length === 0) continue;
      // llms.txt writes placeholders in capitals (TASK_ID), the OpenAPI document in braces ({task_id}).
      const written = path.replace(/\{([a-z_]+)\}/g, (_, name: string) => name.toUpperCase());
      for (const [method] of forAgents) {
        const line = llms.split('\n').find((l) => l.includes(`${written})`) && l.includes(method.toUpperCase()));
        if (!line) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('llms.txt states the rules an agent trips over, with the running figures', () => {
    const l = t.config.limits;
    expect(llms).toContain(`${l.tasksPerHour} tasks per hour and ${l.tasksPerDay} per day`);
    expect(llms).toContain(`${l.messagesPerHour} messages per hour and ${l.messagesPerDay} per day`);
    expect(llms).toContain('1 task with delivery status_poll per day');
    expect(llms).toContain(`${l.readsPerMinute} reads per minute`);
    expect(llms).toMatch(new RegExp(`refused with 429 ${l.autoBlockRefusals} times within 24 hours is blocked for ${l.autoBlockHours} hours`));
    expect(llms).toMatch(/Placeholder domains are refused \(example\.com.*\*\.test.*\*\.invalid/);
    expect(llms).toMatch(/MX record/);
    expect(llms).toContain('Content-Type: application/json');
    expect(llms).toMatch(/delivered and rejected are final/);
    expect(llms).toMatch(/word "test"/);
    expect(llms).toMatch(/## Waiting for a result\n\n- \[Long-poll the task status\]/);
    expect(llms).toMatch(/## Verify a receipt\n\n- \[Receipt signing keys \(JWKS\)\]\([^)]+\/\.well-known\/jwks\.json\)/);
    expect(llms).toContain(`${t.config.baseUrl}/llms-full.txt`);
  });

  it('serves /llms-full.txt: llms.txt, the overview and the whole API reference in one file', async () => {
    const res = await fetch(`${t.url}/llms-full.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('etag')).toBeTruthy();
    const full = await res.text();
    const api = await (await fetch(`${t.url}/api.md`)).text();
    const index = await (await fetch(`${t.url}/index.md`)).text();
    expect(full.startsWith(llms.trimEnd())).toBe(true);
    expect(full).toContain(api.trimEnd());
    expect(full).toContain(index.trimEnd());
    for (const path of ['/api/v1/tasks', '/api/v1/tasks/{task_id}', '/api/v1/messages', '/api/v1/services', '/api/v1/health']) expect(full).toContain(path);
  });

  it('every example request (catalog, api.md, llms.txt, get_human_services) is accepted by the service as written', async () => {
    const services = (await (await fetch(`${t.url}/api/v1/services?limit=50`)).json()) as { services: Array<{ example_request: Json }> };
    const examples = services.services.map((s) => s.example_request);
    const fromLlms = /`(\{"task_type".*?\})`/.exec(llms)?.[1];
    expect(fromLlms).toBeDefined();
    examples.push(JSON.parse(fromLlms ?? '{}') as Json);
    const api = await (await fetch(`${t.url}/api.md`)).text();
    const fromApi = /Example: `(\{.*?\})`/.exec(api)?.[1];
    expect(fromApi).toBeDefined();
    examples.push(JSON.parse(fromApi ?? '{}') as Json);
    const client = await connectClient(t);
    const tool = (await client.callTool({ name: 'get_human_services', arguments: {} })) as unknown as {
      structuredContent: { services: Array<{ example_request: Json }> };
    };
    await client.close();
    examples.push(...tool.structuredContent.services.map((s) => s.example_request));
    let n = 0;
    for (const example of examples) {
      expect(JSON.stringify(example)).not.toMatch(/@/);
      // Each from its own client: status_poll is one task per client per day.
      const res = await postJson(`${t.url}/api/v1/tasks`, example, { 'x-forwarded-for': `203.0.113.${++n}` });
      expect(res.status, JSON.stringify(await res.clone().json())).toBe(202);
    }
    expect(n).toBeGreaterThanOrEqual(12);
  });

  it('shows agents no instruction meant for the deployer', async () => {
    for (const path of ['/llms.txt', '/llms-full.txt', '/index.md', '/agent.json', '/.well-known/human.json', '/']) {
      const body = await (await fetch(`${t.url}${path}`)).text();
      expect(body, path).not.toMatch(/profile file|PROFILE_FILE|set service_area/i);
    }
    const profile = JSON.parse(readFileSync('config/profile.json', 'utf8')) as { operator: { service_area: string } };
    expect(profile.operator.service_area).not.toMatch(/profile/i);
  });

  it('MCP tool input schemas give a type next to every enum', async () => {
    const client = await connectClient(t);
    const { tools } = await client.listTools();
    await client.close();
    const enums: Json[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (typeof node === 'object' && node !== null) {
        if (Array.isArray((node as Json).enum)) enums.push(node as Json);
        Object.values(node).forEach(walk);
      }
    };
    for (const tool of tools) walk(tool.inputSchema);
    expect(enums.length).toBeGreaterThanOrEqual(2);
    for (const schema of enums) expect(schema.type, JSON.stringify(schema)).toBe('string');
  });

  it('says "1 task with delivery status_poll" and "An accepted task"', async () => {
    const client = { 'x-forwarded-for': '203.0.113.200' };
    const body = { task_type: 'data_collection', description: 'Count the benches in the central park, please.', delivery: 'status_poll' };
    expect((await postJson(`${t.url}/api/v1/tasks`, body, client)).status).toBe(202);
    const refused = (await (
      await postJson(`${t.url}/api/v1/tasks`, { ...body, description: 'Count the lamp posts along Elm Road, please.' }, client)
    ).json()) as { message: string };
    expect(refused.message).toContain('Limit reached: 1 task with delivery status_poll per day');
    const created = (await (
      await postJson(
        `${t.url}/api/v1/tasks`,
        { ...body, description: 'Photograph the bus timetable at the Elm Road stop.' },
        { 'x-forwarded-for': '203.0.113.201' },
      )
    ).json()) as { task_id: string };
    const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' };
    await fetch(`${t.url}/api/v1/admin/tasks/${created.task_id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ status: 'accepted' }) });
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${created.task_id}`, {
      method: 'PATCH',
      headers: admin,
      body: JSON.stringify({ status: 'submitted' }),
    });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { message: string }).message).toMatch(/^An accepted task can move to/);
  });
});
