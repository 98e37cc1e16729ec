import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from './console.support.js';
import { adminGet, submit } from './operator.support.js';
import { postJson, STORES, startTestApp, type TestApp, TestClock, validTask } from './support/app.js';

describe.each(STORES)('response target on %s', (store) => {
  let t: TestApp;
  let clock: TestClock;
  let cookie: string;
  const ids: string[] = [];
  beforeAll(async () => {
    clock = new TestClock('2030-03-10T00:00:00.000Z');
    t = await startTestApp({ store, clock, env: { RESPONSE_TARGET_HOURS: '6' } });
    ({ cookie } = await signIn(t));
    // Three tasks an hour apart; the first is seen after 2 h (on time), the others wait.
    for (let i = 0; i < 3; i++) {
      ids.push(await submit(t, { description: `Response target task number ${i}: check the bakery opening hours on Main Street.` }));
      clock.advance(3_600_000);
    }
    clock.set('2030-03-10T02:00:00.000Z');
    expect((await adminGet(t, `/api/v1/admin/tasks/${ids[0]}`)).status).toBe(200);
    clock.set('2030-03-10T08:30:00.000Z');
  });
  afterAll(async () => {
    await t.close();
  });

  it('the console queue puts the oldest waiting task first and flags the ones not seen within the target', async () => {
    const page = await (await fetch(`${t.url}/operator`, { headers: { cookie } })).text();
    const positions = ids.map((id) => page.indexOf(id));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    // Without deadlines, due first (issue 25) is oldest first: the response target comes in creation order.
    expect(page).toContain('Due first: the earlier of deadline and response target on top.');
    // Task 1 (created 01:00, unseen at 08:30) is past the 6 h target; task 2 (02:00) is too; task 0 was seen.
    expect(page.match(/Overdue: not seen within 6 h/g)).toHaveLength(2);
    expect(page).toContain('Target passed 1 h ago');
    const newest = await (await fetch(`${t.url}/operator?order=newest`, { headers: { cookie } })).text();
    expect(newest.indexOf(ids[2]!)).toBeLessThan(newest.indexOf(ids[0]!));
  });

  it('the admin API keeps newest first and offers order=oldest, with cursors bound to the order', async () => {
    const newest = (await (await adminGet(t, '/api/v1/admin/tasks?status=open&limit=2')).json()) as { tasks: { task_id: string }[]; next_cursor: string };
    expect(newest.tasks.map((x) => x.task_id)).toEqual([ids[2], ids[1]]);
    const oldest = (await (await adminGet(t, '/api/v1/admin/tasks?status=open&order=oldest&limit=2')).json()) as {
      tasks: { task_id: string }[];
      next_cursor: string;
    };
    expect(oldest.tasks.map((x) => x.task_id)).toEqual([ids[0], ids[1]]);
    const rest = (await (
      await adminGet(t, `/api/v1/admin/tasks?status=open&order=oldest&limit=2&cursor=${encodeURIComponent(oldest.next_cursor)}`)
    ).json()) as { tasks: { task_id: string }[] };
    expect(rest.tasks.map((x) => x.task_id)).toEqual([ids[2]]);
    const crossed = await adminGet(t, `/api/v1/admin/tasks?status=open&limit=2&cursor=${encodeURIComponent(oldest.next_cursor)}`);
    expect(crossed.status).toBe(400);
    const bad = await adminGet(t, '/api/v1/admin/tasks?order=sideways');
    expect(bad.status).toBe(400);
  });

  it('human.json and capabilities.json publish the measured share of tasks seen within the target', async () => {
    for (const path of ['/.well-known/human.json', '/.well-known/capabilities.json']) {
      const doc = (await (await fetch(`${t.url}${path}`)).json()) as { live: { seen_within_target: Record<string, unknown> } };
      expect(doc.live.seen_within_target).toEqual({ target_hours: 6, window_days: 30, share: 0.333, on_time: 1, due: 3 });
    }
    const human = (await (await fetch(`${t.url}/.well-known/human.json`)).json()) as { operator?: { response_target_hours?: number } };
    expect(JSON.stringify(human)).toContain('"response_target_hours":6');
  });

  it("the submission's answer names the operator's own review target, not a fixed one", async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: 'Response target message: check the bakery opening hours on Main Street.' }));
    expect(res.status).toBe(202);
    const { message } = (await res.json()) as { message: string };
    expect(message).toContain('(target: within 6 hours)');
    expect(message).not.toContain('12 hours');
  });
});
