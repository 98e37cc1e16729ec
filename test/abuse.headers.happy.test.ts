import { describe, expect, it } from 'vitest';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

/**
 * RateLimit-Policy on every response (contract "Rate-limit headers"): the submission policy on
 * task and message routes, whatever the outcome; the read policy everywhere else. The other three
 * fields only on reads and successful submissions.
 */

const TASKS = '3;w=3600;comment="address", 5;w=86400;comment="address"';
const READS = '600;w=60;comment="address"';

describe.each(STORES)('rate-limit headers on %s', (store) => {
  // Background workers running, so readiness answers 200 like every other public read.
  const t = useTestApp({ store, limits: 'production', env: { TRUST_PROXY: '1' }, background: true });

  it('counts health as a read: all four fields, and the count goes down', async () => {
    const client = { 'x-forwarded-for': '192.0.2.40' };
    const first = await fetch(`${t.url}/api/v1/health`, { headers: client });
    expect([first.headers.get('ratelimit-policy'), first.headers.get('ratelimit-limit'), first.headers.get('ratelimit-remaining')]).toEqual([
      READS,
      '600',
      '599',
    ]);
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    const second = await fetch(`${t.url}/api/v1/health`, { headers: client });
    expect(second.headers.get('ratelimit-remaining')).toBe('598');
  });

  it('every public GET of the OpenAPI document carries all four fields, as the document says', async () => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            operationId?: string;
            security?: unknown[];
            parameters?: { required?: boolean }[];
            responses: Record<string, { headers?: Record<string, unknown>; $ref?: string }>;
          }
        >
      >;
    };
    const client = { 'x-forwarded-for': '192.0.2.41' };
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      const get = item.get;
      // A GET that needs a parameter (in its path or its query, such as /log/consistency?from=) is not
      // callable bare; the others are.
      const needsParameter = path.includes('{') || (get?.parameters ?? []).some((parameter) => parameter.required === true);
      if (get === undefined || needsParameter || (get.security ?? []).length > 0 || get.responses['200'] === undefined) continue;
      // "My tasks" answers 200 only to a signed request (test/agents.my-tasks.happy.test.ts).
      if (get.operationId === 'listMyTasks') continue;
      const res = await fetch(`${t.url}${path}`, { headers: client });
      // A document that may not exist yet answers its documented 404 (the checkpoint's time-stamp
      // before a TSA has stamped one, docs/receipt-log.md); the headers are the same.
      expect(get.responses['404'] === undefined ? [200] : [200, 404], path).toContain(res.status);
      for (const name of ['ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'])
        expect(res.headers.get(name), `${path} ${name}`).not.toBeNull();
      expect(Object.keys(get.responses['200'].headers ?? {}), path).toEqual(
        expect.arrayContaining(['RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
      );
      checked += 1;
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it('carries the read policy on an unknown path (404) and a wrong method (405)', async () => {
    const missing = await fetch(`${t.url}/no/such/path`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('ratelimit-policy')).toBe(READS);
    const wrongMethod = await fetch(`${t.url}/api/v1/health`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('ratelimit-policy')).toBe(READS);
  });

  it('carries a policy on a CORS preflight', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks`, {
      method: 'OPTIONS',
      headers: { origin: 'https://agent.example-agent.dev', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get('ratelimit-policy')).toBe(READS);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/RateLimit-Policy/);
  });

  it('carries the read policy on documents and the failed-key policy on admin answers, including 401', async () => {
    const openapi = await fetch(`${t.url}/openapi.json`);
    expect(openapi.headers.get('ratelimit-policy')).toBe(READS);
    const unauthorized = await fetch(`${t.url}/api/v1/admin/blocklist`);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('ratelimit-policy')).toBe('10;w=60;comment="address"');
    const admin = await fetch(`${t.url}/api/v1/admin/blocklist`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } });
    expect(admin.status).toBe(200);
    // The admin API enforces the failed-key-attempt limit, not the read limit, and says so.
    expect(admin.headers.get('ratelimit-policy')).toBe('10;w=60;comment="address"');
  });

  it('carries the submission policy on submission errors, without the other fields', async () => {
    const invalid = await postJson(`${t.url}/api/v1/tasks`, '{"task_type":', { 'x-forwarded-for': '192.0.2.50' });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('ratelimit-policy')).toBe(TASKS);
    const unprocessable = await postJson(`${t.url}/api/v1/tasks`, { task_type: 'nope' }, { 'x-forwarded-for': '192.0.2.50' });
    expect(unprocessable.status).toBe(422);
    expect(unprocessable.headers.get('ratelimit-policy')).toBe(TASKS);
    expect(unprocessable.headers.get('ratelimit-remaining')).toBeNull();
    const message = await postJson(`${t.url}/api/v1/messages`, { message: 'x' }, { 'x-forwarded-for': '192.0.2.50' });
    expect(message.status).toBe(422);
    expect(message.headers.get('ratelimit-policy')).toBe(TASKS);
  });

  it('carries all four fields on a successful submission and message', async () => {
    const task = await postJson(`${t.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '192.0.2.51' });
    expect(task.status).toBe(202);
    expect([task.headers.get('ratelimit-policy'), task.headers.get('ratelimit-limit'), task.headers.get('ratelimit-remaining')]).toEqual([TASKS, '3', '2']);
    expect(Number(task.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    const message = await postJson(
      `${t.url}/api/v1/messages`,
      { message: 'A question about my task.', reply_to: 'agent@mail.example-agent.dev' },
      { 'x-forwarded-for': '192.0.2.51' },
    );
    expect(message.status).toBe(201);
    expect([message.headers.get('ratelimit-policy'), message.headers.get('ratelimit-limit'), message.headers.get('ratelimit-remaining')]).toEqual([
      TASKS,
      '3',
      '2',
    ]);
  });

  it('carries all four fields on a status read, found or not', async () => {
    const created = await postJson(`${t.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '192.0.2.52' });
    const { task_id } = (await created.json()) as { task_id: string };
    const found = await fetch(`${t.url}/api/v1/tasks/${task_id}`, { headers: { 'x-forwarded-for': '192.0.2.52' } });
    expect(found.status).toBe(200);
    expect(found.headers.get('ratelimit-policy')).toBe(READS);
    expect(found.headers.get('ratelimit-limit')).toBe('600');
    expect(found.headers.get('ratelimit-remaining')).toBe('599');
    expect(Number(found.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(Number(found.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
    const missing = await fetch(`${t.url}/api/v1/tasks/task-2030-ffffffffffffffffffffffffffffffff`, { headers: { 'x-forwarded-for': '192.0.2.52' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('ratelimit-remaining')).toBe('598');
  });

  it('counts documents and the services catalog as reads', async () => {
    const client = { 'x-forwarded-for': '192.0.2.53' };
    const first = await fetch(`${t.url}/openapi.json`, { headers: client });
    expect(first.headers.get('ratelimit-remaining')).toBe('599');
    const services = await fetch(`${t.url}/api/v1/services`, { headers: client });
    expect(services.headers.get('ratelimit-policy')).toBe(READS);
    expect(services.headers.get('ratelimit-remaining')).toBe('598');
  });

  it('exposes the headers to browsers through CORS', async () => {
    const res = await fetch(`${t.url}/api/v1/health`, { headers: { origin: 'https://agent.example-agent.dev' } });
    const exposed = res.headers.get('access-control-expose-headers') ?? '';
    for (const name of ['RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']) expect(exposed).toContain(name);
  });
});
