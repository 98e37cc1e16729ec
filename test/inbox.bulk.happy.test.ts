import { describe, expect, it } from 'vitest';
import { signIn } from './console.support.js';
import { adminGet, type Json, submit, taskIn } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';

/**
 * Issue 31: bulk accept (with one ETA) and bulk reject (with one reason) from the queue, without
 * JavaScript: a form of checkboxes. Each task goes through the same transition service as on its
 * own page (its audit row and mail), and the result page says what happened to each.
 */

function postBulk(url: string, cookie: string, fields: [string, string][]): Promise<Response> {
  return fetch(`${url}/operator/bulk`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

describe.each(STORES)('bulk actions in the console on %s', (store) => {
  const clock = new TestClock('2030-07-01T10:00:00.000Z');
  const t = useTestApp({ store, clock, smtp: true, background: true, env: { MAIL_POLL_MS: '50' } });

  it('selects tasks with checkboxes, accepts two with one ETA and rejects with one reason, summarising each', async () => {
    const [a, b, c] = [await submit(t), await submit(t), await submit(t)];
    const delivered = await taskIn(t, 'delivered');
    const { cookie, csrf } = await signIn(t);

    const select = await (await fetch(`${t.url}/operator?status=open&select=1`, { headers: { cookie } })).text();
    for (const id of [a, b, c]) expect(select).toContain(`name="task_id" value="${id}"`);
    expect(select).toContain('Accept selected');
    expect(select).toContain('Reject selected');

    const accepted = await postBulk(t.url, cookie, [
      ['_csrf', csrf],
      ['action', 'accept'],
      ['task_id', a],
      ['task_id', b],
      ['eta_local', '2030-07-03T15:00'],
      ['back', '/operator?status=open'],
    ]);
    expect(accepted.status).toBe(200);
    expect(await accepted.text()).toContain('2 of 2 accepted');
    for (const id of [a, b]) {
      const task = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
      expect(task).toMatchObject({ status: 'accepted', eta: '2030-07-03T15:00:00.000Z' });
    }

    const rejected = await postBulk(t.url, cookie, [
      ['_csrf', csrf],
      ['action', 'reject'],
      ['task_id', c],
      ['task_id', delivered],
      ['reason', 'We do not cover that area.'],
    ]);
    expect(rejected.status).toBe(200);
    const summary = await rejected.text();
    expect(summary).toContain('1 of 2 rejected');
    expect(summary).toContain('which is final');
    expect(((await (await adminGet(t, `/api/v1/admin/tasks/${c}`)).json()) as Json).operator_notes).toBe('We do not cover that area.');
    expect(((await (await adminGet(t, `/api/v1/admin/tasks/${delivered}`)).json()) as Json).status).toBe('delivered');

    // The same audit rows and mails as one task at a time.
    const audit = await t.store.db.selectFrom('audit_log').select(['task_id', 'action']).where('task_id', 'in', [a, b, c]).execute();
    expect(audit.map((r) => `${r.task_id}:${r.action}`).sort()).toEqual([`${a}:task.accepted`, `${b}:task.accepted`, `${c}:task.rejected`].sort());
    const mails = await t.smtp.waitFor(3, (m) => [a, b, c].some((id) => m.text.includes(id) && /accepted|rejected|declined/i.test(`${m.subject} ${m.text}`)));
    expect(mails.length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a bulk action with no task selected, or without a valid CSRF token', async () => {
    const { cookie, csrf } = await signIn(t);
    const none = await postBulk(t.url, cookie, [
      ['_csrf', csrf],
      ['action', 'accept'],
    ]);
    expect(none.status).toBe(422);
    expect(await none.text()).toContain('Select at least one task.');
    const id = await submit(t);
    const forged = await postBulk(t.url, cookie, [
      ['action', 'reject'],
      ['task_id', id],
    ]);
    expect(forged.status).toBe(403);
    expect(((await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json).status).toBe('submitted');
  });
});
