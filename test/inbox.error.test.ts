import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { adminGet, type Json, patchOk, submit } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';
import { waitUntil } from './support/smtp.js';

/**
 * Issue 31's refusals: each bad input gets the contract's error, never a 500, and a held action
 * that the task outran is dropped at commit without changing anything.
 */

describe.each(STORES)('refusals of the inbox tools on %s', (store) => {
  const clock = new TestClock('2030-10-01T10:00:00.000Z');
  const t = useTestApp({ store, clock, background: true, env: { CONSOLE_UNDO_SECONDS: '5', CONSOLE_UNDO_POLL_MS: '50' } });

  it('refuses bad snoozes, unknown tasks, too-late undos, a second held change, bad templates and oversized bulk actions', async () => {
    const { cookie, csrf } = await signIn(t);
    const id = await submit(t);

    expect((await postForm(t, `/operator/tasks/${id}/snooze`, { _csrf: csrf, hours: '2000' }, cookie)).status).toBe(422);
    // Hours beyond any date (1e308 made a RangeError, a 500): refused like the other out-of-range values.
    for (const hours of ['1e308', '-1', 'soon']) {
      const refused = await postForm(t, `/operator/tasks/${id}/snooze`, { _csrf: csrf, hours }, cookie);
      expect(refused.status, hours).toBe(422);
      expect(await refused.text(), hours).toContain('hours must be more than 0 and at most 720');
    }
    expect((await postForm(t, `/operator/tasks/${id}/snooze`, { _csrf: csrf, until_local: 'soon' }, cookie)).status).toBe(422);
    expect((await postForm(t, '/operator/tasks/task-2030-00000000000000000000000000000000/snooze', { _csrf: csrf, hours: '1' }, cookie)).status).toBe(404);
    expect((await postForm(t, '/operator/held/hld-nothing/undo', { _csrf: csrf }, cookie)).status).toBe(409);

    // One status change held at a time; the second is refused with the reason.
    expect((await postForm(t, `/operator/tasks/${id}/accept`, { _csrf: csrf }, cookie)).status).toBe(303);
    const second = await postForm(t, `/operator/tasks/${id}/reject`, { _csrf: csrf, operator_notes: 'No.' }, cookie);
    expect(second.status).toBe(409);
    expect(await second.text()).toContain('waiting to be committed');

    // The task outruns the held accept (rejected through the API): the accept is dropped at commit.
    await patchOk(t, id, { status: 'rejected', operator_notes: 'Rejected elsewhere.' });
    clock.advance(6000);
    await waitUntil(async () => (await t.store.db.selectFrom('held_actions').select('id').execute()).length === 0, 10_000, 'the held accept to be dropped');
    expect((await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json).toMatchObject({
      status: 'rejected',
      operator_notes: 'Rejected elsewhere.',
    });
    const audit = await t.store.db.selectFrom('audit_log').select('action').where('task_id', '=', id).execute();
    expect(audit.map((a) => a.action)).not.toContain('task.accepted');

    // Templates: a bad kind and an over-long name, both named.
    const bad = await postForm(t, '/operator/templates', { _csrf: csrf, kind: 'poem', name: 'x'.repeat(81), body: 'Hi' }, cookie);
    expect(bad.status).toBe(422);
    const page = await bad.text();
    expect(page).toContain('kind must be reply or result');
    expect(page).toContain('name must be 1 to 80 characters');
    expect((await postForm(t, '/operator/templates/tpl-nothing', { _csrf: csrf, kind: 'reply', name: 'A', body: 'B' }, cookie)).status).toBe(404);

    // Bulk: an unknown action, more than 50 tasks.
    const body = (fields: [string, string][]) =>
      fetch(`${t.url}/operator/bulk`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams(fields).toString(),
      });
    expect(
      (
        await body([
          ['_csrf', csrf],
          ['action', 'delete'],
          ['task_id', id],
        ])
      ).status,
    ).toBe(422);
    const many = Array.from({ length: 51 }, (_, i) => ['task_id', `task-2030-${i.toString(16).padStart(32, '0')}`] as [string, string]);
    const tooMany = await body([['_csrf', csrf], ['action', 'reject'], ...many]);
    expect(tooMany.status).toBe(422);
    expect(await tooMany.text()).toContain('at most 50');
  });
});
