import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { submit } from './operator.support.js';
import { STORES, type TestClock, useTestApp } from './support/app.js';
import { api, json, newOperator } from './team.support.js';

describe.each(STORES)('assignment and duty on %s', (store) => {
  const t = useTestApp({ store });

  it('assigns through PATCH, shows assignee in the admin views only, filters the queue, and unassigns', async () => {
    const op = await newOperator(t);
    const id = await submit(t);
    const assigned = await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { assignee: op.operator_id }, op.auth), 200);
    expect(assigned.assignee).toBe(op.operator_id);
    expect((await json(await api(t, 'GET', `/api/v1/admin/tasks/${id}`), 200)).assignee).toBe(op.operator_id);
    const mine = await json(await api(t, 'GET', `/api/v1/admin/tasks?assignee=${op.operator_id}`), 200);
    expect((mine.tasks as { task_id: string; assignee: string }[]).map((task) => [task.task_id, task.assignee])).toEqual([[id, op.operator_id]]);
    const unassigned = await json(await api(t, 'GET', '/api/v1/admin/tasks?assignee=none&limit=200'), 200);
    expect((unassigned.tasks as { task_id: string }[]).map((task) => task.task_id)).not.toContain(id);
    // Operators stay anonymous to requesters.
    const pub = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Record<string, unknown>;
    expect(pub).not.toHaveProperty('assignee');
    expect(JSON.stringify(pub)).not.toContain(op.operator_id);
    const cleared = await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { assignee: null }, op.auth), 200);
    expect(cleared.assignee).toBeNull();
    const audit = await json(await api(t, 'GET', `/api/v1/admin/audit?task_id=${id}`), 200);
    expect((audit.entries as { action: string; details: { assignee: string | null } }[]).map((e) => [e.action, e.details.assignee])).toEqual([
      ['task.assigned', null],
      ['task.assigned', op.operator_id],
    ]);
  });

  it('refuses an assignee that is not an enabled operator', async () => {
    const op = await newOperator(t);
    const id = await submit(t);
    for (const assignee of ['op-00000000000000000000000000000000', 42, '']) {
      const res = await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { assignee });
      expect(res.status, String(assignee)).toBe(422);
    }
    await json(await api(t, 'PATCH', `/api/v1/admin/operators/${op.operator_id}`, { disabled: true }), 200);
    expect((await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { assignee: op.operator_id })).status).toBe(422);
  });

  it('takes a task in the console and counts it under Mine; Give to… hands it on', async () => {
    const op = await newOperator(t, 'operator', 'Grace');
    const other = await newOperator(t, 'operator', 'Linus');
    const id = await submit(t);
    const me = await signIn(t, op.key);
    const before = await (await fetch(`${t.url}/operator?view=mine`, { headers: { cookie: me.cookie } })).text();
    expect(before).toMatch(/Mine <span class="count">0<\/span>/);
    const page = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie: me.cookie } })).text();
    expect(page).toContain('Take it');
    expect((await postForm(t, `/operator/tasks/${id}/assign`, { _csrf: me.csrf, assignee: op.operator_id }, me.cookie)).status).toBe(303);
    const after = await (await fetch(`${t.url}/operator?view=mine`, { headers: { cookie: me.cookie } })).text();
    expect(after).toMatch(/Mine <span class="count">1<\/span>/);
    expect(after).toContain(id);
    expect((await postForm(t, `/operator/tasks/${id}/assign`, { _csrf: me.csrf, assignee: other.operator_id }, me.cookie)).status).toBe(303);
    expect((await json(await api(t, 'GET', `/api/v1/admin/tasks/${id}`), 200)).assignee).toBe(other.operator_id);
    // Without the CSRF token nothing changes.
    expect((await postForm(t, `/operator/tasks/${id}/assign`, { assignee: op.operator_id }, me.cookie)).status).toBe(403);
    expect((await json(await api(t, 'GET', `/api/v1/admin/tasks/${id}`), 200)).assignee).toBe(other.operator_id);
  });

  it('publishes in human.json how many operators are on duty', async () => {
    const op = await newOperator(t);
    const read = async () => {
      (t.clock as TestClock).advance(10_000);
      return ((await (await fetch(`${t.url}/.well-known/human.json`)).json()) as { live: { operators_on_duty: number | null } }).live.operators_on_duty;
    };
    const before = await read();
    const me = await signIn(t, op.key);
    expect((await postForm(t, '/operator/duty', { _csrf: me.csrf, on_duty: '1' }, me.cookie)).status).toBe(303);
    expect(await read()).toBe((before ?? 0) + 1);
    expect((await postForm(t, '/operator/duty', { _csrf: me.csrf, on_duty: '0' }, me.cookie)).status).toBe(303);
    expect(await read()).toBe(before ?? 0);
  });
});

describe('human.json without a team', () => {
  const t = useTestApp({ store: 'sqlite' });
  it('says null: the owner works alone, by working hours', async () => {
    const doc = (await (await fetch(`${t.url}/.well-known/human.json`)).json()) as { live: { operators_on_duty: number | null } };
    expect(doc.live.operators_on_duty).toBeNull();
  });
});
