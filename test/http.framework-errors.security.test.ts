import { createRequire } from 'node:module';
import { connect } from 'node:net';
import type { FastifyError } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../src/domain/errors.js';
import { fromFastify } from '../src/http/errors.js';
import { FRAMEWORK_ERRORS } from '../src/http/framework-errors.js';
import { STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';

/**
 * Contract, "Errors of the URL itself": every path template of the OpenAPI document × hostile URL
 * forms answers the contract's error body with the usual headers — never Fastify's own body, a
 * 414, or a response without RateLimit-Policy, CORS and X-Request-Id.
 */

const LONG = 'a'.repeat(201);
/** Hostile forms of a path parameter, with the answer each must get (task id paths: 404 when too long). */
const FORMS: Array<{ form: string; status: number; error: string; taskStatus?: number; taskError?: string }> = [
  { form: '%ZZ', status: 400, error: 'malformed_request' },
  { form: '%', status: 400, error: 'malformed_request' },
  { form: '%E0%A4%A', status: 400, error: 'malformed_request' },
  { form: '%C0%AF', status: 400, error: 'malformed_request' },
  { form: '%00', status: 400, error: 'malformed_request' },
  { form: 'x%00y', status: 400, error: 'malformed_request' },
  { form: LONG, status: 400, error: 'malformed_request', taskStatus: 404, taskError: 'task_not_found' },
  { form: `${'%41'.repeat(201)}`, status: 400, error: 'malformed_request', taskStatus: 404, taskError: 'task_not_found' },
];

interface Op {
  method: string;
  template: string;
}

function expectUsualHeaders(res: Response): void {
  expect(res.headers.get('ratelimit-policy')).toMatch(/;w=/);
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('x-request-id')).toMatch(/^[\w.:-]+$/);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
}

describe.each(STORES)('errors of the URL itself on %s', (store) => {
  const t = useTestApp({ store });
  let ops: Op[];
  beforeAll(async () => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    ops = Object.entries(doc.paths).flatMap(([template, item]) => Object.keys(item).map((method) => ({ method: method.toUpperCase(), template })));
  });

  it('every path template with a parameter × every hostile form answers the contract body and headers', async () => {
    const withParams = ops.filter((op) => op.template.includes('{'));
    expect(withParams.length).toBeGreaterThanOrEqual(5);
    const failures: string[] = [];
    for (const op of withParams) {
      const isTask = /^\/api\/v1\/(admin\/)?tasks\/\{task_id\}/.test(op.template);
      for (const { form, status, error, taskStatus, taskError } of FORMS) {
        const path = op.template.replace(/\{[^}]+\}/g, form);
        for (const auth of [false, true]) {
          const res = await fetch(`${t.url}${path}`, {
            method: op.method,
            headers: { accept: 'application/json', 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${TEST_ADMIN_KEY}` } : {}) },
            body: op.method === 'GET' || op.method === 'DELETE' || op.method === 'HEAD' ? undefined : '{}',
          });
          const text = await res.text();
          const want = isTask && taskStatus ? taskStatus : status;
          const wantError = isTask && taskError ? taskError : error;
          const label = `${op.method} ${path.slice(0, 60)}${auth ? ' (with key)' : ''}`;
          if (res.status !== want) failures.push(`${label}: ${res.status} ${text.slice(0, 120)}`);
          else {
            expect(text, label).not.toMatch(/FST_ERR|statusCode/);
            expect(JSON.parse(text), label).toMatchObject({ error: wantError, message: expect.any(String) });
            expectUsualHeaders(res);
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('an over-long task id is 404 task_not_found, never 414', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks/${LONG}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'task_not_found' });
    expectUsualHeaders(res);
  });

  it('keeps a caller X-Request-Id on a URL error', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks/%ZZ`, { headers: { 'x-request-id': 'trace-42' } });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-request-id')).toBe('trace-42');
  });

  it('a request the HTTP parser rejects (raw NUL, raw space in the URL) gets the contract body', async () => {
    for (const line of ['GET /api/v1/tasks/a\u0000b HTTP/1.1', 'GET /api/v1/tasks/a b c HTTP/1.1', 'GET /api/v1/health HTTP/1.1\r\nBad Header: x']) {
      const raw = await new Promise<string>((resolve, reject) => {
        const url = new URL(t.url);
        const socket = connect(Number(url.port), url.hostname, () => socket.write(`${line}\r\nHost: 127.0.0.1\r\n\r\n`));
        let data = '';
        socket.on('data', (chunk) => {
          data += chunk.toString('latin1');
        });
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(raw, line).toMatch(/^HTTP\/1\.1 400 /);
      expect(raw).toMatch(/ratelimit-policy: /i);
      expect(raw).toMatch(/access-control-allow-origin: \*/i);
      expect(raw).toMatch(/x-request-id: /i);
      const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { error: string };
      expect(body.error).toBe('malformed_request');
    }
  });

  it('body errors before the handler carry the contract body and the usual headers', async () => {
    const cases: Array<[RequestInit, number, string]> = [
      [{ method: 'POST', headers: { 'content-type': 'application/json' }, body: '' }, 400, 'invalid_json'],
      [{ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' }, 400, 'invalid_json'],
      [{ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"__proto__":{"x":1}}' }, 400, 'invalid_json'],
      [{ method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' }, 415, 'unsupported_media_type'],
      [{ method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<a/>' }, 415, 'unsupported_media_type'],
      [
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ description: 'x'.repeat(70_000) }) },
        413,
        'payload_too_large',
      ],
    ];
    for (const [init, status, error] of cases) {
      const res = await fetch(`${t.url}/api/v1/tasks`, init);
      expect(res.status, `${String(init.body).slice(0, 20)}`).toBe(status);
      expect(await res.json()).toMatchObject({ error });
      expectUsualHeaders(res);
    }
  });
});

describe('the framework error table', () => {
  it('maps every request-time FST_ERR code to a contract code with its status', () => {
    for (const [code, { code: contract }] of Object.entries(FRAMEWORK_ERRORS)) {
      const mapped = fromFastify(Object.assign(new Error('x'), { code, statusCode: 400 }) as FastifyError);
      expect(mapped?.code, code).toBe(contract);
      expect(mapped?.status).toBe(ERROR_STATUS[contract]);
    }
  });

  it('covers every FST_ERR code Fastify raises while handling a request', () => {
    const errors = createRequire(import.meta.url)('fastify/lib/errors.js') as Record<string, unknown>;
    const requestTime = [
      'FST_ERR_BAD_URL',
      'FST_ERR_MAX_PARAM_LENGTH',
      'FST_ERR_ASYNC_CONSTRAINT',
      'FST_ERR_VALIDATION',
      'FST_ERR_HANDLER_TIMEOUT',
      'FST_ERR_ROUTE_MISSING_CONTENT_TYPE',
    ];
    const ctp = Object.keys(errors).filter((code) =>
      /^FST_ERR_CTP_(BODY_TOO_LARGE|INVALID_MEDIA_TYPE|INVALID_CONTENT_LENGTH|EMPTY_JSON_BODY|INVALID_JSON_BODY)$/.test(code),
    );
    expect(ctp).toHaveLength(5);
    for (const code of [...requestTime, ...ctp]) {
      expect(Object.keys(errors), code).toContain(code);
      expect(FRAMEWORK_ERRORS[code], code).toBeDefined();
    }
  });
});
