import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { patchOk, submit, taskIn } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp } from './support/app.js';

/**
 * Issue 31, speed for a practised operator: the queue's search, filters and sorts, and snooze,
 * through the real console over HTTP on both stores. What the operator sees is the queue's list.
 */

/** The task ids the queue page lists, in order. */
function listed(page: string): string[] {
  return [...page.matchAll(/<li[^>]*data-task-id="([^"]+)"/g)].map((m) => m[1] ?? '');
}

describe.each(STORES)('the queue finds tasks by search, filter and sort on %s', (store) => {
  const clock = new TestClock('2030-05-01T10:00:00.000Z');
  const t = useTestApp({ store, clock });

  it('search by words, task id, message id and e-mail; filters; sorts; a bad filter is refused', async () => {
    const bakery = await submit(t, { description: 'Check whether the BAKERY on Elm Row opens early on Sundays.', deadline: '2030-05-03T12:00:00Z' });
    const app = await submit(t, {
      task_type: 'product_or_app_testing',
      description: 'Try the signup flow of our mobile app and report every confusing step.',
      location_required: false,
      location_detail: undefined,
      contact_email: 'maria@mail.example-agent.dev',
      requester: 'Maria Lopez',
      deadline: '2030-05-10T12:00:00Z',
    });
    const museum = await submit(t, {
      description: 'Photograph the opening hours sign of the city museum.',
      location_detail: 'Shelbyville',
      deadline: '2030-05-02T09:00:00Z',
    });
    const accepted = await taskIn(t, 'accepted', { description: 'Count the parking spaces behind the town hall, please.' });
    await patchOk(t, accepted, { eta: '2030-05-01T12:00:00Z' });
    const later = await taskIn(t, 'accepted', { description: 'Ask the florist about wedding prices for June.' });
    await patchOk(t, later, { eta: '2030-05-04T12:00:00Z' });
    clock.advance(60_000);
    const done = await taskIn(t, 'delivered', { description: 'An old delivered bakery check.', contact_email: 'maria@mail.example-agent.dev' });
    const sent = await postJson(`${t.url}/api/v1/messages`, {
      message: `About ${museum}: the sign is on the back door.`,
      reply_to: 'someone@mail.example-agent.dev',
    });
    const messageId = ((await sent.json()) as { message_id: string }).message_id;

    const { cookie } = await signIn(t);
    const queue = async (query: string, status = 200) => {
      const res = await fetch(`${t.url}/operator?${query}`, { headers: { cookie } });
      const page = await res.text();
      expect(res.status, `${query}: ${page.slice(0, 300)}`).toBe(status);
      return page;
    };

    // The toolbar is a GET form on the plain queue.
    const plain = await queue('status=open');
    expect(plain).toContain('role="search"');
    expect(plain).toContain('name="q"');

    // Words: case-insensitive, over description, requester and place; open tasks only.
    expect(listed(await queue('status=open&q=bakery'))).toEqual([bakery]);
    expect(listed(await queue('status=open&q=maria%20lopez'))).toEqual([app]);
    expect(listed(await queue('status=open&q=shelbyville'))).toEqual([museum]);
    // A task id and a message id: found by key, whatever the status tab.
    expect(listed(await queue(`status=all&q=${done}`))).toEqual([done]);
    expect(listed(await queue(`status=open&q=${done}`))).toEqual([done]);
    expect(listed(await queue(`status=open&q=${messageId}`))).toEqual([museum]);
    // An e-mail address: the requester's contact, across statuses on the All tab.
    expect(listed(await queue('status=all&order=newest&q=maria%40mail.example-agent.dev'))).toEqual([done, app]);

    // Filters.
    expect(listed(await queue('status=open&type=product_or_app_testing'))).toEqual([app]);
    expect(new Set(listed(await queue('status=open&location=remote')))).toEqual(new Set([app]));
    expect(listed(await queue('status=open&location=onsite'))).not.toContain(app);
    expect(listed(await queue('status=open&requester=maria%40mail.example-agent.dev'))).toEqual([app]);
    expect(listed(await queue('status=open&deadline_before=2030-05-03'))).toEqual([museum, bakery]);
    clock.set('2030-05-01T13:00:00.000Z');
    expect(listed(await queue('status=open&overdue=1'))).toEqual([accepted]);
    // Sorts: deadline soonest (tasks with one), ETA soonest (accepted tasks).
    expect(listed(await queue('status=open&sort=deadline'))).toEqual([museum, bakery, app]);
    expect(listed(await queue('status=open&sort=eta'))).toEqual([accepted, later]);
    // Filters combine.
    expect(listed(await queue('status=open&sort=deadline&location=onsite'))).toEqual([museum, bakery]);

    // Nothing matches: an empty list, not an error; a bad filter is the contract's 422.
    expect(listed(await queue('status=open&q=zeppelin'))).toEqual([]);
    const bad = await queue('status=open&deadline_before=tomorrow', 422);
    expect(bad).toContain('deadline_before must be a date');
    expect(await queue('status=open&sort=price', 422)).toContain('sort must be deadline or eta');
  });

  it('a snoozed task leaves the inbox until its time, shows in the Snoozed view, and is audited', async () => {
    const id = await submit(t, { description: 'Check the price of a coffee at the station kiosk.' });
    const { cookie, csrf } = await signIn(t);
    const page = async (path: string) => (await fetch(`${t.url}${path}`, { headers: { cookie } })).text();
    expect(listed(await page('/operator?status=open'))).toContain(id);

    const snooze = await postForm(t, `/operator/tasks/${id}/snooze`, { _csrf: csrf, hours: '3' }, cookie);
    expect(snooze.status).toBe(303);
    expect(listed(await page('/operator?status=open'))).not.toContain(id);
    const snoozed = await page('/operator?status=snoozed');
    expect(listed(snoozed)).toEqual([id]);
    expect(snoozed).toContain('Snoozed until');
    expect(await page(`/operator/tasks/${id}`)).toContain('Snoozed until');
    const audit = (await t.store.db.selectFrom('audit_log').select(['action', 'details']).where('task_id', '=', id).execute()).map((r) => r.action);
    expect(audit).toContain('task.snoozed');

    // A snooze into the past is refused; the time passes and the task is back.
    const refused = await postForm(t, `/operator/tasks/${id}/snooze`, { _csrf: csrf, until_local: '2000-01-01T00:00' }, cookie);
    expect(refused.status).toBe(422);
    clock.advance(3 * 3_600_000 + 1000);
    expect(listed(await page('/operator?status=open'))).toContain(id);
    expect(listed(await page('/operator?status=snoozed'))).toEqual([]);

    // Wake now, before the time.
    await postForm(t, `/operator/tasks/${id}/snooze`, { _csrf: csrf, hours: '24' }, cookie);
    expect(listed(await page('/operator?status=open'))).not.toContain(id);
    expect((await postForm(t, `/operator/tasks/${id}/wake`, { _csrf: csrf, back: 'queue' }, cookie)).status).toBe(303);
    expect(listed(await page('/operator?status=open'))).toContain(id);
  });
});
