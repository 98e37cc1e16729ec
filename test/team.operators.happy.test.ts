import { describe, expect, it } from 'vitest';
import { signIn } from './console.support.js';
import { submit } from './operator.support.js';
import { STORES, startTestApp, TEST_ADMIN_KEY, useTestApp } from './support/app.js';
import { api, json, newOperator } from './team.support.js';

describe.each(STORES)('operators on %s', (store) => {
  const t = useTestApp({ store });

  it('creates an operator with an invite link, lists and changes them', async () => {
    const created = await json(
      await api(t, 'POST', '/api/v1/admin/operators', { name: 'Grace Hopper', email: 'Grace@Team.example.org', role: 'operator' }),
      201,
    );
    expect(created.operator_id).toMatch(/^op-[0-9a-f]{32}$/);
    expect(created).toMatchObject({ name: 'Grace Hopper', email: 'grace@team.example.org', role: 'operator', disabled: false, on_duty: false });
    expect(created.invite_url).toMatch(new RegExp(`^${t.config.baseUrl}/operator/invite/[A-Za-z0-9_-]{43}$`));
    const list = await json(await api(t, 'GET', '/api/v1/admin/operators'), 200);
    expect((list.operators as { operator_id: string }[]).map((o) => o.operator_id)).toContain(created.operator_id);
    const changed = await json(await api(t, 'PATCH', `/api/v1/admin/operators/${created.operator_id as string}`, { role: 'admin' }), 200);
    expect(changed.role).toBe('admin');
  });

  it('gives personal keys shown once, listed without the secret, working within the role, revocable', async () => {
    const op = await newOperator(t);
    expect(op.key).toMatch(/^hto_[A-Za-z0-9_-]{43}$/);
    const keys = await json(await api(t, 'GET', `/api/v1/admin/operators/${op.operator_id}/keys`, undefined, op.auth), 200);
    expect(keys.keys).toEqual([{ key_id: op.key_id, created_at: expect.any(String), revoked_at: null }]);
    expect(JSON.stringify(keys)).not.toContain(op.key);
    // Within the operator role: the queue yes, the blocklist no.
    const taskId = await submit(t);
    expect((await api(t, 'GET', `/api/v1/admin/tasks/${taskId}`, undefined, op.auth)).status).toBe(200);
    const refused = await api(t, 'GET', '/api/v1/admin/blocklist', undefined, op.auth);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'forbidden' });
    // Its own keys: yes; another operator's: no.
    const other = await newOperator(t);
    expect((await api(t, 'GET', `/api/v1/admin/operators/${other.operator_id}/keys`, undefined, op.auth)).status).toBe(403);
    const second = await json(await api(t, 'POST', `/api/v1/admin/operators/${op.operator_id}/keys`, undefined, op.auth), 201);
    expect((await api(t, 'DELETE', `/api/v1/admin/operators/${op.operator_id}/keys/${op.key_id}`, undefined, op.auth)).status).toBe(204);
    expect((await api(t, 'GET', '/api/v1/admin/tasks', undefined, op.auth)).status).toBe(401);
    expect((await api(t, 'GET', '/api/v1/admin/tasks', undefined, { authorization: `Bearer ${second.key as string}` })).status).toBe(200);
  });

  it('signs an operator in to the console with a personal key; ADMIN_KEY still signs in as the owner', async () => {
    const op = await newOperator(t);
    const session = await signIn(t, op.key);
    expect((await fetch(`${t.url}/operator`, { headers: { cookie: session.cookie } })).status).toBe(200);
    const blocklist = await fetch(`${t.url}/operator/blocklist`, { headers: { cookie: session.cookie } });
    expect(blocklist.status).toBe(403);
    expect(blocklist.headers.get('content-type')).toMatch(/^text\/html/);
    const owner = await signIn(t, TEST_ADMIN_KEY);
    expect((await fetch(`${t.url}/operator/blocklist`, { headers: { cookie: owner.cookie } })).status).toBe(200);
  });
});

describe.each(STORES)('two instances on one %s store', (store) => {
  const first = useTestApp({ store });

  it('stops a revoked key and a disabled operator’s keys and sessions at once on the other instance', async () => {
    const second = await startTestApp({ store, shareDatabaseWith: first });
    try {
      const op = await newOperator(first);
      const spare = await json(await api(first, 'POST', `/api/v1/admin/operators/${op.operator_id}/keys`), 201);
      const spareAuth = { authorization: `Bearer ${spare.key as string}` };
      const session = await signIn(second, op.key);
      expect((await api(second, 'GET', '/api/v1/admin/tasks', undefined, op.auth)).status).toBe(200);
      expect((await api(first, 'DELETE', `/api/v1/admin/operators/${op.operator_id}/keys/${op.key_id}`)).status).toBe(204);
      expect((await api(second, 'GET', '/api/v1/admin/tasks', undefined, op.auth)).status).toBe(401);
      expect((await api(second, 'GET', '/api/v1/admin/tasks', undefined, spareAuth)).status).toBe(200);
      await json(await api(first, 'PATCH', `/api/v1/admin/operators/${op.operator_id}`, { disabled: true }), 200);
      expect((await api(second, 'GET', '/api/v1/admin/tasks', undefined, spareAuth)).status).toBe(401);
      const page = await fetch(`${second.url}/operator`, { headers: { cookie: session.cookie }, redirect: 'manual' });
      expect(page.status).toBe(303);
      expect(page.headers.get('location')).toMatch(/^\/operator\/login/);
    } finally {
      await second.close();
    }
  });
});
