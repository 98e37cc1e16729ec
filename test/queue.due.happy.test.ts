import { describe, expect, it } from 'vitest';
import { signIn } from './console.support.js';
import { adminGet, submit } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';

/** The queue orders open tasks by the earlier of deadline and response target, and shows the time left (issue 25). */

describe.each(STORES)('the queue, due first, on %s', (store) => {
  const clock = new TestClock('2030-03-10T08:00:00.000Z');
  const t = useTestApp({ store, clock, env: { RESPONSE_TARGET_HOURS: '12' } });

  it('a task with a near deadline goes before older tasks; each shows how long is left', async () => {
    const old = await submit(t);
    clock.set('2030-03-10T09:00:00.000Z');
    const urgent = await submit(t, { deadline: '2030-03-10T12:00:00Z' });
    clock.set('2030-03-10T10:00:00.000Z');
    const { cookie } = await signIn(t);
    const page = await (await fetch(`${t.url}/operator`, { headers: { cookie } })).text();
    expect(page).toContain('Due first: the earlier of deadline and response target on top.');
    expect(page.indexOf(urgent)).toBeGreaterThan(0);
    expect(page.indexOf(urgent)).toBeLessThan(page.indexOf(old));
    // The time left, and when it is due in the operator's time (issue 31: UTC until the script runs).
    expect(page).toContain('2 h left');
    expect(page).toContain('deadline <time datetime="2030-03-10T12:00:00.000Z" title="2030-03-10 12:00 UTC" data-local="short">Sun 12:00 UTC</time>');
    expect(page).toContain('10 h left');
    expect(page).toContain('due <time datetime="2030-03-10T20:00:00.000Z"');
    clock.set('2030-03-10T13:00:00.000Z');
    const later = await (await fetch(`${t.url}/operator`, { headers: { cookie } })).text();
    expect(later).toContain('Deadline passed 1 h ago');
  });

  it('the admin API pages through order=due with a cursor bound to it', async () => {
    const first = (await (await adminGet(t, '/api/v1/admin/tasks?status=open&order=due&limit=1')).json()) as {
      tasks: { task_id: string }[];
      next_cursor: string;
    };
    expect(first.tasks).toHaveLength(1);
    const second = (await (await adminGet(t, `/api/v1/admin/tasks?status=open&order=due&limit=1&cursor=${encodeURIComponent(first.next_cursor)}`)).json()) as {
      tasks: { task_id: string }[];
    };
    expect(second.tasks[0]?.task_id).not.toBe(first.tasks[0]?.task_id);
    expect((await adminGet(t, `/api/v1/admin/tasks?status=open&order=oldest&limit=1&cursor=${encodeURIComponent(first.next_cursor)}`)).status).toBe(400);
  });
});
