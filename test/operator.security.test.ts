import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, adminGet, type Json, patch, submit, taskIn } from './operator.support.js';
import { STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';

const BAD_AUTH: [string, Record<string, string>][] = [
  ['no header', {}],
  ['a wrong key', { authorization: 'Bearer wrong-key-0123456789abcdef' }],
  ['the key with one character off', { authorization: `Bearer ${TEST_ADMIN_KEY.slice(0, -1)}X` }],
  ['the key as Basic credentials', { authorization: `Basic ${Buffer.from(`admin:${TEST_ADMIN_KEY}`).toString('base64')}` }],
  ['the key without a scheme', { authorization: TEST_ADMIN_KEY }],
  ['Bearer without a token', { authorization: 'Bearer ' }],
  ['two tokens', { authorization: `Bearer ${TEST_ADMIN_KEY} ${TEST_ADMIN_KEY}` }],
  ['the key in another header', { 'x-admin-key': TEST_ADMIN_KEY }],
];

describe.each(STORES)('operator API security on %s', (store) => {
  let taskId: string;
  const t = useTestApp({ store });
  beforeAll(async () => {
    taskId = await submit(t);
  });

  const endpoints = (): [string, string, unknown][] => [
    ['GET', '/api/v1/admin/tasks', undefined],
    ['GET', `/api/v1/admin/tasks/${taskId}`, undefined],
    ['GET', '/api/v1/admin/messages', undefined],
    ['GET', '/api/v1/admin/stats', undefined],
    ['PATCH', `/api/v1/tasks/${taskId}`, { status: 'accepted' }],
    ['PATCH', `/api/v1/admin/tasks/${taskId}`, { status: 'rejected' }],
  ];

  for (const [label, headers] of BAD_AUTH) {
    it(`answers 401 unauthorized without a WWW-Authenticate challenge for ${label}`, async () => {
      for (const [method, path, body] of endpoints()) {
        const res = await fetch(`${t.url}${path}`, {
          method,
          headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : null,
        });
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toBeNull();
        const err = (await res.json()) as Json;
        expect(err.error).toBe('unauthorized');
        expect(typeof err.message).toBe('string');
      }
      // Nothing happened: not seen, not moved.
      const row = await t.store.db.selectFrom('tasks').select(['status', 'seen_by_operator_at']).where('id', '=', taskId).executeTakeFirstOrThrow();
      expect(row).toEqual({ status: 'submitted', seen_by_operator_at: null });
    });
  }

  it('checks the key before reading the body', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks/${taskId}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{not json' });
    expect(res.status).toBe(401);
    const unknown = await fetch(`${t.url}/api/v1/admin/tasks/task-2030-00000000000000000000000000000000`);
    expect(unknown.status).toBe(401);
  });

  it('accepts the scheme in any case and marks operator data as not cacheable', async () => {
    const res = await adminGet(t, '/api/v1/admin/tasks?limit=1', { authorization: `bearer ${TEST_ADMIN_KEY}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('never shows the contact e-mail on the public status endpoint, whatever the status', async () => {
    for (const status of ['accepted', 'delivered', 'rejected']) {
      const id = await taskIn(t, status);
      const text = await (await fetch(`${t.url}/api/v1/tasks/${id}`)).text();
      expect(text).not.toContain('agent@mail.example-agent.dev');
      expect(text).not.toContain('contact_email');
      expect(text).not.toContain('request_sha256');
    }
  });

  it('still refuses a PATCH with the key sent in the query string', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks/${taskId}?key=${TEST_ADMIN_KEY}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: '{"status":"accepted"}',
    });
    expect(res.status).toBe(401);
    expect((await patch(t, taskId, { status: 'accepted' }, { headers: ADMIN })).status).toBe(200);
  });
});
