import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { publicLimits } from '../src/docs/limits.js';
import { TASK_TYPES } from '../src/domain/tasks/task.js';
import { API_VERSION, SERVICE_VERSION } from '../src/version.js';
import { arr, at, getJson, getText, type Json, obj, walkServices } from './docs.support.js';
import { TOOL_NAMES } from './mcp.support.js';
import { postJson, STORES, startTestApp, TestClock, useTestApp, validTask, writeTask } from './support/app.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

describe.each(STORES)('discovery documents on %s', (store) => {
  let d: Record<'agent' | 'wellKnownAgent' | 'human' | 'capabilities' | 'services' | 'openapi' | 'resource' | 'health', Json>;
  const clock = new TestClock('2030-03-10T10:00:00.000Z');

  const t = useTestApp({ store, clock });
  beforeAll(async () => {
    d = {
      agent: await getJson(t, '/agent.json'),
      wellKnownAgent: await getJson(t, '/.well-known/agent.json'),
      human: await getJson(t, '/.well-known/human.json'),
      capabilities: await getJson(t, '/.well-known/capabilities.json'),
      services: await getJson(t, '/.well-known/services.json'),
      openapi: await getJson(t, '/openapi.json'),
      resource: await getJson(t, '/.well-known/oauth-protected-resource'),
      health: await getJson(t, '/api/v1/health'),
    };
  });

  it('serves the manifest identically at both addresses', () => {
    expect(d.wellKnownAgent).toEqual(d.agent);
  });

  it('states one version everywhere, the one in package.json', () => {
    expect(SERVICE_VERSION).toBe(pkg.version);
    expect(d.agent.version).toBe(pkg.version);
    expect(at(d.openapi, 'info.version')).toBe(pkg.version);
    for (const doc of [d.agent, d.human, d.capabilities, d.services]) {
      expect(at(doc, 'service.version')).toBe(pkg.version);
      expect(at(doc, 'service.api_version')).toBe(API_VERSION);
    }
    expect(d.health.api_version).toBe(API_VERSION);
    expect(d.openapi['x-api-version']).toBe(API_VERSION);
    expect(at(d.agent, 'api_versions.current')).toBe(API_VERSION);
    expect(at(d.agent, 'api_versions.deprecations')).toEqual([]);
    expect(arr(d.agent, 'api_versions.versions')).toEqual([
      { version: 'v1', base_url: `${t.config.baseUrl}/api/v1`, status: 'current', deprecated_at: null, sunset_at: null },
    ]);
  });

  it('states the running limits, the same in every document', async () => {
    const limits = JSON.parse(JSON.stringify(publicLimits(t.config))) as Json;
    expect(d.agent.limits).toEqual(limits);
    expect(d.capabilities.limits).toEqual(limits);
    expect(at(d.openapi, 'components.schemas.TaskInput.properties.description.maxLength')).toBe(at(limits, 'description_chars.max'));
    expect(at(d.agent, 'task_schema.properties.description.minLength')).toBe(at(limits, 'description_chars.min'));
    expect(at(d.agent, 'task_schema.properties.location_detail.maxLength')).toBe(limits.location_detail_max_chars);
    const limitParam = arr(d.openapi, 'paths./api/v1/services.get.parameters').find((p) => p.name === 'limit');
    expect(at(limitParam, 'schema.maximum')).toBe(at(limits, 'services_page_limit.max'));
    const api = (await getText(t, '/api.md')).text;
    expect(api).toContain(`${String(at(limits, 'description_chars.min'))}–${String(at(limits, 'description_chars.max'))} characters`);
    expect(api).toContain(`bodies up to ${String(limits.request_body_max_bytes)} bytes`);
  });

  it('follows changed limits: the documents are generated from the running config', async () => {
    const other = await startTestApp({ store, env: { DESCRIPTION_MAX_CHARS: '4000', SERVICES_PAGE_MAX: '7', TASK_LIMIT_PER_HOUR: '2' } });
    try {
      const agent = await getJson(other, '/agent.json');
      expect(at(agent, 'limits.description_chars.max')).toBe(4000);
      expect(at(agent, 'task_schema.properties.description.maxLength')).toBe(4000);
      expect(at(agent, 'limits.task_submissions_per_client.per_hour')).toBe(2);
      const openapi = await getJson(other, '/openapi.json');
      expect(at(openapi, 'components.schemas.TaskInput.properties.description.maxLength')).toBe(4000);
      expect((await walkServices(other, 7)).pages).toBe(Math.ceil(other.deps.catalog.length / 7));
    } finally {
      await other.close();
    }
  });

  it('lists the same task types everywhere', async () => {
    const types = [...TASK_TYPES];
    expect(at(d.agent, 'task_types.accepted')).toEqual(types);
    expect(at(d.capabilities, 'task_types.accepted')).toEqual(types);
    expect(at(d.agent, 'task_schema.properties.task_type.enum')).toEqual(types);
    expect(at(d.openapi, 'components.schemas.TaskInput.properties.task_type.enum')).toEqual(types);
    expect(arr(d.agent, 'task_types.rejected').length).toBeGreaterThan(0);
    for (const entry of arr(d.services, 'services')) expect(types).toContain(entry.task_type);
    const llms = (await getText(t, '/llms.txt')).text;
    for (const type of types) expect(llms).toContain(type);
  });

  it('names the same MCP tools everywhere, and the MCP server card agrees', async () => {
    const names = arr(d.agent, 'mcp.tools').map((tool) => tool.name);
    expect(names).toEqual(TOOL_NAMES);
    expect(arr(d.capabilities, 'interfaces.mcp.tools').map((tool) => tool.name)).toEqual(names);
    const llms = (await getText(t, '/llms.txt')).text;
    const index = (await getText(t, '/index.md')).text;
    for (const name of TOOL_NAMES) {
      expect(llms).toContain(name);
      expect(index).toContain(name);
    }
    const card = await fetch(`${t.url}/.well-known/mcp`);
    if (card.status === 200) {
      const body = (await card.json()) as Json;
      expect(
        arr(body, 'tools')
          .map((tool) => tool.name)
          .sort(),
      ).toEqual([...TOOL_NAMES].sort());
      expect(body.version).toBe(pkg.version);
    }
  });

  it('carries the catalog, the same in every document and in the paginated API', async () => {
    const catalog = t.deps.catalog;
    expect(d.services.services).toEqual(catalog);
    expect(d.agent.services).toEqual(catalog);
    expect(arr(d.agent, 'skills').map((s) => s.id)).toEqual(catalog.map((c) => c.service_id));
    expect(arr(d.capabilities, 'capabilities').map((c) => c.service_id)).toEqual(catalog.map((c) => c.service_id));
    const page = await getJson(t, '/api/v1/services?limit=50');
    expect(page.services).toEqual(catalog);
    expect(page.next_cursor).toBeNull();
  });

  it('walks the whole catalog with every page size, each entry once, in order', async () => {
    const expected = t.deps.catalog.map((c) => c.service_id);
    for (const size of [1, 2, 3, 4, 7, 9, 10, 11, 20, 50]) {
      const { ids, pages } = await walkServices(t, size);
      expect(ids, `limit=${size}`).toEqual(expected);
      expect(pages, `limit=${size}`).toBe(Math.max(1, Math.ceil(expected.length / size)));
    }
  });

  it('pages the catalog 20 at a time without a limit, and accepts an empty cursor as none', async () => {
    const page = await getJson(t, '/api/v1/services?cursor=');
    expect(arr(page, 'services').length).toBe(Math.min(20, t.deps.catalog.length));
    expect(obj(await getJson(t, '/api/v1/services'))).toEqual(page);
  });

  it('is an A2A-style agent card as well as a platform manifest', () => {
    const a = d.agent;
    expect(a.name).toEqual(expect.any(String));
    expect(a.description).toEqual(expect.any(String));
    expect(a.url).toBe(t.config.baseUrl);
    expect(a.capabilities).toEqual({ streaming: false, pushNotifications: false, stateTransitionHistory: true });
    for (const skill of arr(a, 'skills')) {
      expect(skill).toMatchObject({ id: expect.any(String), name: expect.any(String), description: expect.any(String), tags: expect.any(Array) });
    }
    expect(at(a, 'pricing.model')).toBe('free pilot');
    expect(at(a, 'trust.will_not_do')).toEqual(t.deps.profile.policy.will_not_do);
    expect(at(a, 'trust.receipts.jwks')).toBe(`${t.config.baseUrl}/.well-known/jwks.json`);
    expect(at(a, 'endpoints.submit_task.url')).toBe(`${t.config.baseUrl}/api/v1/tasks`);
    expect(at(a, 'endpoints.mcp.url')).toBe(`${t.config.baseUrl}/mcp`);
    expect(at(a, 'authentication.required')).toBe(false);
  });

  it('links only to documents that exist', async () => {
    for (const [id, url] of Object.entries(obj(d.agent, 'documents'))) {
      const res = await fetch(String(url).replace(t.config.baseUrl, t.url));
      expect(res.status, id).toBe(200);
    }
  });

  it('states in RFC 9728 metadata that nothing is token-protected', () => {
    expect(d.resource.resource).toBe(t.config.baseUrl);
    expect(d.resource.authorization_servers).toEqual([]);
    expect(String(d.resource.note)).toMatch(/nothing here is token-protected/i);
  });

  it('describes the operator, their policy and availability in human.json', () => {
    const profile = t.deps.profile;
    expect(at(d.human, 'operator.name')).toBe(profile.operator.name);
    expect(at(d.human, 'operator.languages')).toEqual(profile.operator.languages);
    expect(at(d.human, 'policy.will_not_do')).toEqual(profile.policy.will_not_do);
    expect(at(d.human, 'availability.working_hours')).toBe(profile.operator.working_hours);
    expect(at(d.human, 'availability.response_target_hours')).toBe(profile.response_target_hours);
  });

  it('serves llms.txt, index.md and api.md as text, api.md covering every endpoint', async () => {
    const llms = await getText(t, '/llms.txt');
    expect(llms.type).toMatch(/^text\/plain/);
    expect(llms.text.startsWith('# ')).toBe(true);
    expect(llms.text).toMatch(/^> /m);
    for (const path of ['/index.md', '/api.md']) {
      const doc = await getText(t, path);
      expect(doc.type).toMatch(/^text\/markdown/);
      expect(doc.text.startsWith('# ')).toBe(true);
    }
    const api = (await getText(t, '/api.md')).text;
    for (const path of Object.keys(obj(d.openapi, 'paths'))) expect(api).toContain(path);
  });

  it('answers a repeated request with 304 when the ETag still matches', async () => {
    for (const path of ['/agent.json', '/openapi.json', '/llms.txt', '/api.md', '/.well-known/capabilities.json']) {
      const first = await fetch(`${t.url}${path}`);
      const etag = first.headers.get('etag') ?? '';
      expect(etag, path).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(first.headers.get('cache-control')).toMatch(/max-age=\d+/);
      const again = await fetch(`${t.url}${path}`, { headers: { 'if-none-match': `W/${etag}` } });
      expect(again.status, path).toBe(304);
      expect(await again.text()).toBe('');
    }
  });

  it('serves HEAD for documents', async () => {
    const res = await fetch(`${t.url}/agent.json`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBeTruthy();
  });

  it('answers Accept: text/markdown on the home page and the document pages', async () => {
    for (const path of ['/', '/docs', '/docs/agent', '/docs/api', '/docs/services']) {
      const res = await getText(t, path, { accept: 'text/markdown' });
      expect(res.status, path).toBe(200);
      expect(res.type, path).toMatch(/^text\/markdown/);
      expect(res.text.startsWith('# '), path).toBe(true);
      expect(res.headers.get('vary')).toMatch(/accept/i);
      const page = await getText(t, path, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
      expect(page.type, path).toMatch(/^text\/html/);
    }
    expect((await getText(t, '/', { accept: 'text/markdown' })).text).toBe((await getText(t, '/index.md')).text);
    // RFC 8631 links lead a program from the home page to the API description.
    const home = await getText(t, '/');
    expect(home.headers.get('link')).toContain('</openapi.json>; rel="service-desc"');
    expect(home.headers.get('link')).toContain('</api.md>; rel="service-doc"');
  });

  it('publishes live figures from the store in capabilities.json and human.json', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
      expect(res.status).toBe(202);
      ids.push(String(((await res.json()) as Json).task_id));
    }
    // The operator first looked at two of them after 1 h and 3 h, accepted one after 2 h, rejected one.
    const created = clock.now().getTime();
    const hoursLater = (hours: number) => new Date(created + hours * 3_600_000).toISOString();
    await writeTask(t, ids[0] ?? '', { seen_by_operator_at: hoursLater(1), accepted_at: hoursLater(2), status: 'accepted' });
    await writeTask(t, ids[1] ?? '', { seen_by_operator_at: hoursLater(3) });
    await writeTask(t, ids[2] ?? '', { status: 'rejected', rejected_at: hoursLater(1) });
    clock.advance(60_000); // past the figures' cache
    for (const path of ['/.well-known/capabilities.json', '/.well-known/human.json']) {
      const live = obj(await getJson(t, path), 'live');
      expect(live.open_queue, path).toBe(2);
      expect(live.window_days).toBe(30);
      expect(live.time_to_first_view_seconds).toEqual({ median: 3600, p90: 10800, samples: 2 });
      expect(live.time_to_acceptance_seconds).toEqual({ median: 7200, p90: 7200, samples: 1 });
      expect(at(live, 'remaining_capacity_today.task_cap')).toBe(t.config.limits.dailyTaskCap);
      expect(at(live, 'remaining_capacity_today.tasks')).toBe(t.config.limits.dailyTaskCap - 3);
      expect(at(live, 'remaining_capacity_today.resets_at')).toBe('2030-03-11T00:00:00.000Z');
      expect(live.as_of).toBe(clock.now().toISOString());
    }
  });

  it('keeps live figures for a few seconds, then refreshes them', async () => {
    clock.advance(60_000);
    const first = obj(await getJson(t, '/.well-known/capabilities.json'), 'live');
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask())).status).toBe(202);
    clock.advance(1_000);
    expect(at(await getJson(t, '/.well-known/capabilities.json'), 'live.open_queue')).toBe(first.open_queue);
    clock.advance(10_000);
    expect(at(await getJson(t, '/.well-known/capabilities.json'), 'live.open_queue')).toBe(Number(first.open_queue) + 1);
  });
});
