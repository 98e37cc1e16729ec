import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';
import { requestText } from './support/net.js';

/**
 * "No 500 for any input": every route of the OpenAPI document, with and without the operator key,
 * gets hostile path parameters, query strings, headers and bodies. Any 5xx, or a body that looks
 * like a stack trace, fails.
 */

const PATH_VALUES = ['x', '%00', '..%2F..%2Fetc%2Fpasswd', 'task-2030-' + 'f'.repeat(32), '%F0%9F%92%A9', 'a'.repeat(190), '%E0%A4%A'];

const BODIES: (string | undefined)[] = [
  undefined,
  '',
  '{',
  'null',
  '[]',
  '"text"',
  '1e309',
  '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"x":1}}}',
  JSON.stringify({ status: 'accepted', eta: 'tomorrow', operator_notes: 5 }),
  JSON.stringify({ status: ['delivered'], operator_notes: { a: 1 } }),
  JSON.stringify({ kind: 'ip', value: 'not-an-ip', expires_at: 'never' }),
  JSON.stringify({ kind: 'email', value: 'x'.repeat(5000) }),
  JSON.stringify({ task_type: 'data_collection', description: '\u0000'.repeat(20), delivery: 'status_poll' }),
  JSON.stringify({
    task_type: 'data_collection',
    description: 'Count the benches in the park.',
    deadline: '9999-12-31T23:59:59Z',
    delivery: 'status_poll',
    budget_usd: 1e308,
  }),
  JSON.stringify({ message: '\uD800\uDC00'.repeat(10), reply_to: 'a@b' }),
  JSON.stringify({ status: 'accepted', eta: '2031-01-01T00:00:00Z', operator_notes: 'a\u0000b' }),
  JSON.stringify({ operator_notes: '\u0000' }),
  JSON.stringify({ kind: 'requester', value: 'bot\u0000', reason: '\u0000' }),
  JSON.stringify({ kind: 'domain', value: 'a\u0000.dev' }),
  JSON.stringify({ message: 'Hello operator', reply_to: 'agent@mail.example-agent.dev', from: '\u0000' }),
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'submit_human_task', arguments: { task_type: 42 } } }),
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'check_task_status', arguments: { task_id: '../../x' } } }),
  JSON.stringify({ jsonrpc: '2.0', method: 'nope' }),
  JSON.stringify(Array.from({ length: 50 }, () => ({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))),
  '{"a":'.repeat(2000) + '1' + '}'.repeat(2000),
];

const QUERIES = [
  '',
  '?limit=0',
  '?limit=-1',
  '?limit=abc',
  '?limit=1e400',
  '?cursor=%00',
  '?cursor=' + 'A'.repeat(500),
  '?status=nope',
  '?id=%3Cscript%3E',
  '?limit=2&limit=3',
  '?days=-5',
];

const CONTENT_TYPES = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1'];

interface Route {
  method: string;
  path: string;
}

describe.each(STORES)('hostile input on every route on %s', (store) => {
  let routes: Route[];
  // With its background workers, as in production: readiness answers 200, not its 503 of an idle instance.
  const t = useTestApp({ store, limits: 'relaxed', background: true });
  beforeAll(async () => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })));
    routes.push({ method: 'POST', path: '/tasks' }, { method: 'GET', path: '/tasks' }, { method: 'POST', path: '/operator/login' });
  });

  // One kept-alive connection, as a client sending one request after another would use.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  afterAll(() => agent.destroy());

  async function check(method: string, url: string, init: { headers: Record<string, string>; body?: string }): Promise<void> {
    const { status, text } = await requestText(url, { method, agent, ...init });
    expect(status, `${method} ${url} → ${status} ${text.slice(0, 200)}`).toBeLessThan(500);
    expect(text, `${method} ${url}`).not.toMatch(/\n\s+at \S+ \(|node_modules\//);
  }

  it('never answers 5xx or shows internals', async () => {
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const paths = route.path.includes('{') ? PATH_VALUES.map((v) => route.path.replace(/\{[^}]+\}/g, v)) : [route.path];
      for (const path of paths) {
        for (const auth of [undefined, `Bearer ${TEST_ADMIN_KEY}`]) {
          const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
          if (auth) headers.authorization = auth;
          for (const query of QUERIES) await check(route.method, `${t.url}${path}${query}`, { headers });
          if (route.method === 'GET' || route.method === 'DELETE') continue;
          for (const body of BODIES) {
            for (const type of CONTENT_TYPES) {
              await check(route.method, `${t.url}${path}`, { headers: { ...headers, 'content-type': type, 'idempotency-key': 'fuzz' }, body });
            }
          }
        }
      }
    }
  }, 240_000);
});
