import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { openApiPath, registeredRoutes } from '../src/docs/openapi.js';
import { arr, at, getJson, type Json, obj } from './docs.support.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const RATE_LIMITED = new Set(['read', 'task', 'message']);

/** Routes for people or plumbing, which the document leaves out on purpose. */
function isHidden(route: { method: string; url: string; schema: { hide?: boolean } | undefined }): boolean {
  return (
    route.schema?.hide === true ||
    route.method === 'HEAD' ||
    route.method === 'OPTIONS' ||
    route.url.includes('*') ||
    route.url === '/operator' ||
    route.url.startsWith('/operator/')
  );
}

describe.each(STORES)('the OpenAPI document on %s', (store) => {
  let doc: Json;
  let resolved: Json;

  /** The operation with every $ref resolved. */
  const operation = (method: string, path: string): Json => obj(obj(obj(resolved, 'paths')[path])[method.toLowerCase()]);
  const pathItem = (path: string): Json | undefined => (obj(resolved, 'paths')[path] as Json | undefined) ?? undefined;

  const t = useTestApp({ store });
  beforeAll(async () => {
    doc = await getJson(t, '/openapi.json');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    resolved = validator.resolveRefs() as Json;
  });

  it('is a valid OpenAPI 3.0 document whose references all resolve', async () => {
    expect(doc.openapi).toBe('3.0.3');
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.valid).toBe(true);
    expect(JSON.stringify(resolved)).not.toContain('"$ref"');
    expect(arr(doc, 'servers')[0]?.url).toBe(t.config.baseUrl);
  });

  it('contains every public route the app serves, and nothing it does not serve', () => {
    const routes = registeredRoutes(t.app).filter((r) => !isHidden(r));
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      expect(pathItem(openApiPath(route.url))?.[route.method.toLowerCase()], `${route.method} ${route.url}`).toBeDefined();
    }
    const served = new Set(routes.map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`));
    for (const [path, item] of Object.entries(obj(doc, 'paths'))) {
      for (const method of Object.keys(obj(item))) expect(served.has(`${method} ${path}`), `${method} ${path}`).toBe(true);
    }
  });

  it('covers the endpoints of the specification', () => {
    for (const [method, path] of [
      ['post', '/api/v1/tasks'],
      ['get', '/api/v1/tasks/{task_id}'],
      ['post', '/api/v1/messages'],
      ['get', '/api/v1/health'],
      ['get', '/api/v1/services'],
      ['get', '/agent.json'],
      ['get', '/.well-known/agent.json'],
      ['get', '/.well-known/human.json'],
      ['get', '/.well-known/capabilities.json'],
      ['get', '/.well-known/services.json'],
      ['get', '/.well-known/oauth-protected-resource'],
      ['get', '/openapi.json'],
      ['get', '/llms.txt'],
      ['get', '/index.md'],
      ['get', '/api.md'],
      ['post', '/mcp'],
    ] as const) {
      expect(pathItem(path)?.[method], `${method} ${path}`).toBeDefined();
    }
  });

  it('leaves the human pages out', () => {
    for (const path of ['/', '/tasks', '/docs', '/docs/{id}']) expect(pathItem(path), path).toBeUndefined();
  });

  it('lists every status each route can return', () => {
    for (const route of registeredRoutes(t.app).filter((r) => !isHidden(r))) {
      const name = `${route.method} ${route.url}`;
      const codes = Object.keys(obj(operation(route.method, openApiPath(route.url)), 'responses'));
      const declared = Object.keys((route.schema?.response as Json | undefined) ?? {});
      for (const code of declared) expect(codes, name).toContain(code);
      expect(codes, name).toContain('500');
      if (BODY_METHODS.has(route.method)) for (const code of ['400', '413', '415']) expect(codes, name).toContain(code);
      if (RATE_LIMITED.has(route.kind)) expect(codes, name).toContain('429');
    }
  });

  it('documents the headers: RateLimit-* everywhere, Retry-After on 429, Location on 202, Idempotency-Key', () => {
    for (const [path, item] of Object.entries(obj(resolved, 'paths'))) {
      for (const [method, op] of Object.entries(obj(item))) {
        for (const [code, response] of Object.entries(obj(op, 'responses'))) {
          const headers = obj(response, 'headers');
          expect(headers['RateLimit-Policy'], `${method} ${path} ${code}`).toBeDefined();
          if (code === '429') {
            for (const h of ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) expect(headers[h], `${path} 429 ${h}`).toBeDefined();
          }
        }
      }
    }
    expect(at(operation('POST', '/api/v1/tasks'), 'responses.202.headers.Location')).toBeDefined();
    for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) {
      expect(at(operation('POST', '/api/v1/tasks'), `responses.202.headers.${h}`)).toBeDefined();
      expect(at(operation('GET', '/api/v1/tasks/{task_id}'), `responses.200.headers.${h}`)).toBeDefined();
      expect(at(operation('GET', '/api/v1/services'), `responses.200.headers.${h}`)).toBeDefined();
    }
    const params = arr(operation('POST', '/api/v1/tasks'), 'parameters');
    expect(params.find((p) => p.name === 'Idempotency-Key')).toMatchObject({ in: 'header', required: false });
  });

  it('puts the admin endpoints under bearerAuth, and nothing public', () => {
    expect(at(doc, 'components.securitySchemes.bearerAuth')).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toBeUndefined();
    let admin = 0;
    for (const [path, item] of Object.entries(obj(resolved, 'paths'))) {
      for (const [method, op] of Object.entries(obj(item))) {
        const isAdmin = path.startsWith('/api/v1/admin') || path === '/metrics' || (method === 'patch' && path.startsWith('/api/v1/tasks/'));
        const security = (obj(op).security as unknown[] | undefined) ?? [];
        if (isAdmin) {
          admin++;
          expect(security, `${method} ${path}`).toEqual([{ bearerAuth: [] }]);
          expect(Object.keys(obj(op, 'responses')), `${method} ${path}`).toContain('401');
        } else {
          expect(security, `${method} ${path}`).toEqual([]);
          expect(Object.keys(obj(op, 'responses')), `${method} ${path}`).not.toContain('401');
        }
      }
    }
    expect(admin).toBeGreaterThan(0);
  });

  it('describes the error body once, and each error response with exactly the codes its operation can answer', () => {
    expect(obj(doc, 'components.schemas.Error').properties).toMatchObject({ error: { type: 'string' }, message: { type: 'string' } });
    const codesOf = (method: string, path: string, status: string): string[] => {
      const response = obj(operation(method, path), `responses.${status}`);
      const schema = obj(response, 'content.application/json.schema');
      return (arr(schema, 'allOf')[1] as { properties: { error: { enum: string[] } } }).properties.error.enum;
    };
    expect(codesOf('POST', '/api/v1/tasks', '429')).toEqual(['rate_limited', 'capacity_reached']);
    expect(String(at(operation('POST', '/api/v1/tasks'), 'responses.429.description'))).toMatch(/rate_limited.*capacity_reached/);
    expect(codesOf('POST', '/api/v1/tasks', '400')).toEqual(['invalid_json', 'malformed_request']);
    expect(codesOf('POST', '/api/v1/tasks', '409')).toEqual(['duplicate_task']);
    expect(String(at(operation('POST', '/api/v1/tasks'), 'responses.409.description'))).not.toMatch(/invalid_transition/);
    expect(codesOf('PATCH', '/api/v1/tasks/{task_id}', '409')).toEqual(['invalid_transition']);
    expect(codesOf('GET', '/api/v1/services', '400')).toEqual(['malformed_request', 'invalid_cursor']);
    expect(codesOf('GET', '/api/v1/tasks/{task_id}', '404')).toEqual(['task_not_found']);
    expect(codesOf('DELETE', '/api/v1/admin/blocklist/{id}', '404')).toEqual(['not_found']);
    expect(codesOf('GET', '/api/v1/tasks/{task_id}', '429')).toEqual(['rate_limited']);
    expect(at(operation('GET', '/mcp'), 'responses.405.headers.Allow')).toBeDefined();
    // Every operation can be refused for its URL (NUL, bad encoding): 400 is documented everywhere.
    for (const [path, item] of Object.entries(obj(resolved, 'paths'))) {
      for (const [method, op] of Object.entries(obj(item)))
        expect(Object.keys(obj(op, 'responses')), `${method} ${path}`).toEqual(expect.arrayContaining(['400', '500', '503']));
    }
  });

  it('states what the validation accepts: nullable optional inputs and contact_email unless status_poll', () => {
    const input = obj(doc, 'components.schemas.TaskInput');
    for (const field of ['deadline', 'requester', 'budget_usd', 'location_detail', 'contact_email', 'delivery'])
      expect(at(input, `properties.${field}.nullable`), field).toBe(true);
    expect(input.anyOf).toEqual([
      { required: ['contact_email'], properties: { contact_email: { type: 'string' } } },
      { required: ['delivery'], properties: { delivery: { type: 'string', enum: ['status_poll'] } } },
    ]);
    expect(String(input.description)).toMatch(/contact_email is required unless delivery is status_poll/);
    const block = obj(operation('POST', '/api/v1/admin/blocklist'), 'requestBody.content.application/json.schema');
    const blockSchema = typeof block.$ref === 'string' ? obj(doc, `components.schemas.${block.$ref.split('/').pop() ?? ''}`) : block;
    for (const field of ['reason', 'expires_at']) expect(at(blockSchema, `properties.${field}.nullable`), field).toBe(true);
    expect(at(blockSchema, 'properties.kind.nullable')).toBeUndefined();
    const status = at(obj(doc, 'components.schemas.Task'), 'properties.status.enum');
    expect(status).toEqual(['submitted', 'under_review', 'in_progress', 'accepted', 'delivered', 'rejected']);
  });

  it('documents every status the running app actually answers', async () => {
    const id = `task-2030-${'0'.repeat(32)}`;
    const cases: Array<{ method: string; path: string; send: () => Promise<Response> }> = [
      { method: 'POST', path: '/api/v1/tasks', send: () => postJson(`${t.url}/api/v1/tasks`, validTask()) },
      { method: 'POST', path: '/api/v1/tasks', send: () => postJson(`${t.url}/api/v1/tasks`, '{not json') },
      { method: 'POST', path: '/api/v1/tasks', send: () => postJson(`${t.url}/api/v1/tasks`, { task_type: 'nope' }) },
      {
        method: 'POST',
        path: '/api/v1/tasks',
        send: () => fetch(`${t.url}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' }),
      },
      { method: 'POST', path: '/api/v1/tasks', send: () => postJson(`${t.url}/api/v1/tasks`, { ...validTask(), description: 'x'.repeat(70_000) }) },
      { method: 'GET', path: '/api/v1/tasks/{task_id}', send: () => fetch(`${t.url}/api/v1/tasks/${id}`) },
      { method: 'POST', path: '/api/v1/messages', send: () => postJson(`${t.url}/api/v1/messages`, { message: 'hi' }) },
      { method: 'GET', path: '/api/v1/services', send: () => fetch(`${t.url}/api/v1/services?limit=0`) },
      { method: 'GET', path: '/api/v1/services', send: () => fetch(`${t.url}/api/v1/services?cursor=forged.cursor`) },
      { method: 'GET', path: '/api/v1/health', send: () => fetch(`${t.url}/api/v1/health`) },
      { method: 'GET', path: '/agent.json', send: () => fetch(`${t.url}/agent.json`) },
      { method: 'GET', path: '/api/v1/admin/tasks', send: () => fetch(`${t.url}/api/v1/admin/tasks`) },
      {
        method: 'GET',
        path: '/api/v1/admin/tasks',
        send: () => fetch(`${t.url}/api/v1/admin/tasks`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } }),
      },
      {
        method: 'PATCH',
        path: '/api/v1/tasks/{task_id}',
        send: () => fetch(`${t.url}/api/v1/tasks/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{}' }),
      },
    ];
    for (const c of cases) {
      const res = await c.send();
      const codes = Object.keys(obj(operation(c.method, c.path), 'responses'));
      expect(codes, `${c.method} ${c.path} answered ${res.status}`).toContain(String(res.status));
      expect(res.headers.get('ratelimit-policy'), `${c.method} ${c.path}`).toBeTruthy();
    }
  });
});
