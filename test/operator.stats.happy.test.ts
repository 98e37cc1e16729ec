import { describe, expect, it } from 'vitest';
import { durationStats, taskStats } from '../src/services/console/stats.js';
import { adminGet, patchOk, submit } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';

describe('durationStats', () => {
  it('gives nearest-rank median and p90 in whole seconds, null without samples', () => {
    expect(durationStats([])).toEqual({ median: null, p90: null, samples: 0 });
    expect(durationStats([5])).toEqual({ median: 5, p90: 5, samples: 1 });
    expect(durationStats([600, 60, 120])).toEqual({ median: 120, p90: 600, samples: 3 });
    expect(durationStats(Array.from({ length: 10 }, (_, i) => (i + 1) * 10.4))).toEqual({ median: 52, p90: 94, samples: 10 });
  });
});

describe.each(STORES)('task stats on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock });

  it('measures time to first view and to acceptance over the window', async () => {
    clock.set('2030-01-20T10:00:00.000Z');
    const old = await submit(t);
    await patchOk(t, old, { status: 'rejected' });

    clock.set('2030-03-10T10:00:00.000Z');
    const [a, b, c] = [await submit(t), await submit(t), await submit(t)];
    clock.set('2030-03-10T10:01:00.000Z');
    await adminGet(t, `/api/v1/admin/tasks/${a}`);
    clock.set('2030-03-10T10:02:00.000Z');
    await adminGet(t, `/api/v1/admin/tasks/${b}`);
    clock.set('2030-03-10T10:05:00.000Z');
    await patchOk(t, a, { status: 'accepted' });
    clock.set('2030-03-10T10:10:00.000Z');
    await adminGet(t, `/api/v1/admin/tasks/${c}`);
    clock.set('2030-03-10T10:15:00.000Z');
    await patchOk(t, b, { status: 'accepted' });
    await patchOk(t, b, { status: 'delivered', operator_notes: 'done' });

    const stats = await taskStats(t.deps);
    expect(stats).toEqual({
      counts_by_status: { submitted: 1, under_review: 0, in_progress: 0, accepted: 1, delivered: 1, rejected: 0 },
      open_queue: 2,
      time_to_first_view_seconds: { median: 120, p90: 600, samples: 3 },
      time_to_acceptance_seconds: { median: 300, p90: 900, samples: 2 },
    });
    const wide = await taskStats(t.deps, { days: 60 });
    expect(wide.counts_by_status.rejected).toBe(1);
    expect(wide.time_to_first_view_seconds.samples).toBe(4);

    const api = (await (await adminGet(t, '/api/v1/admin/stats')).json()) as Record<string, unknown>;
    expect(api).toMatchObject({ window_days: 30, ...stats });
  });
});
