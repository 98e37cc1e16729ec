import { describe, expect, it } from 'vitest';
import { STORES, useTestApp } from './support/app.js';
import { api, json, newOperator } from './team.support.js';

describe.each(STORES)('operators API refusals on %s', (store) => {
  const t = useTestApp({ store });

  it('refuses bad operator input with 422 and every problem in details', async () => {
    const cases: [unknown, string[]][] = [
      [{}, ['name is required', 'email is required', 'role is required']],
      [{ name: ' ', email: 'a@team.example.org', role: 'operator' }, ['name must not be blank']],
      [{ name: 'A', email: 'not-an-address', role: 'operator' }, ['email must be a valid e-mail address']],
      [{ name: 'A', email: '<b>x</b>@team.example.org', role: 'operator' }, ['email must be a valid e-mail address']],
      [{ name: 'A', email: 'a@team.example.org', role: 'root' }, ['role must be one of: operator, admin']],
      [{ name: 'A', email: 'a@team.example.org', role: 'operator', extra: 1 }, ['extra is not a field of this request (use name, email, role)']],
    ];
    for (const [body, details] of cases) {
      const res = await api(t, 'POST', '/api/v1/admin/operators', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(((await res.json()) as { details: string[] }).details, JSON.stringify(body)).toEqual(details);
    }
    expect((await api(t, 'POST', '/api/v1/admin/operators', '[1]')).status).toBe(400);
  });

  it('refuses a second operator with the same e-mail', async () => {
    await json(await api(t, 'POST', '/api/v1/admin/operators', { name: 'A', email: 'twice@team.example.org', role: 'operator' }), 201);
    const again = await api(t, 'POST', '/api/v1/admin/operators', { name: 'B', email: 'TWICE@team.example.org', role: 'admin' });
    expect(again.status).toBe(422);
  });

  it('refuses to demote or disable the last admin, even by themselves', async () => {
    const admin = await newOperator(t, 'admin');
    const others = (
      (await json(await api(t, 'GET', '/api/v1/admin/operators'), 200)).operators as { operator_id: string; role: string; disabled: boolean }[]
    ).filter((o) => o.role === 'admin' && !o.disabled && o.operator_id !== admin.operator_id);
    for (const other of others) await json(await api(t, 'PATCH', `/api/v1/admin/operators/${other.operator_id}`, { role: 'operator' }), 200);
    for (const body of [{ disabled: true }, { role: 'operator' }]) {
      const res = await api(t, 'PATCH', `/api/v1/admin/operators/${admin.operator_id}`, body, admin.auth);
      expect(res.status, JSON.stringify(body)).toBe(409);
      expect(await res.json()).toMatchObject({ error: 'invalid_transition' });
    }
    // With a second admin, the first may step down.
    const second = await newOperator(t, 'admin');
    await json(await api(t, 'PATCH', `/api/v1/admin/operators/${admin.operator_id}`, { role: 'operator' }, admin.auth), 200);
    expect((await api(t, 'GET', '/api/v1/admin/operators', undefined, admin.auth)).status).toBe(403);
    expect((await api(t, 'GET', '/api/v1/admin/operators', undefined, second.auth)).status).toBe(200);
  });

  it('answers 404 for unknown operators and keys, 422 for an empty patch', async () => {
    const op = await newOperator(t);
    expect((await api(t, 'PATCH', '/api/v1/admin/operators/op-0000', { role: 'admin' })).status).toBe(404);
    expect((await api(t, 'POST', '/api/v1/admin/operators/op-0000/keys')).status).toBe(404);
    expect((await api(t, 'DELETE', `/api/v1/admin/operators/${op.operator_id}/keys/key-none`)).status).toBe(404);
    expect((await api(t, 'PATCH', `/api/v1/admin/operators/${op.operator_id}`, {})).status).toBe(422);
    expect((await api(t, 'PATCH', `/api/v1/admin/operators/${op.operator_id}`, { disabled: 'yes' })).status).toBe(422);
  });

  it('refuses a personal key of a disabled operator, and new keys for them', async () => {
    const op = await newOperator(t);
    await json(await api(t, 'PATCH', `/api/v1/admin/operators/${op.operator_id}`, { disabled: true }), 200);
    expect((await api(t, 'GET', '/api/v1/admin/tasks', undefined, op.auth)).status).toBe(401);
    expect((await api(t, 'POST', `/api/v1/admin/operators/${op.operator_id}/keys`)).status).toBe(409);
  });
});
