import { describe, expect, it } from 'vitest';
import { runRetention } from '../src/services/runtime/retention.js';
import { recountTasks, storedTaskCounts } from '../src/store/tasks/task-counts-repo.js';
import { deliveredRecord, importOk, openRecord, rejectedRecord } from './import.support.js';
import { adminGet, patch, submit } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';
import { seededRandom } from './support/random.js';

/**
 * Issue 28: the task counts kept in the transaction of each change (task_counts) agree with a full
 * recount after a randomized sequence of every kind of change: submissions (ordinary and test
 * tasks, several at once so they share a group commit), first views, acceptances, deliveries,
 * rejections, refused transitions, imports and retention's erasure, over several days.
 */

for (const store of STORES) {
  describe(`kept task counts (${store})`, () => {
    const clock = new TestClock('2030-03-01T10:00:00.000Z');
    const t = useTestApp({ store, clock, env: { RETENTION_DAYS: '5' } });

    it('agree with a full recount after a randomized sequence of changes', async () => {
      const seed = Number(process.env.COUNTS_SEED ?? Date.now() % 100_000);
      const next = seededRandom(seed);
      const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(next() * items.length)];
      const tasks: string[] = [];
      const recount = async () =>
        expect(Object.fromEntries(await storedTaskCounts(t.store.db)), `seed ${seed}`).toEqual(Object.fromEntries(await recountTasks(t.store.db)));

      for (let step = 0; step < 120; step++) {
        const roll = next();
        const id = pick(tasks);
        if (roll < 0.25 || id === undefined) {
          // Several at once: one group-commit batch of mixed test and ordinary tasks.
          const made = await Promise.all(
            Array.from({ length: 1 + Math.floor(next() * 4) }, (_, i) =>
              submit(t, {
                description: `Check the opening hours of shop number ${step}-${i} on Main Street.`,
                ...(next() < 0.3 ? { requester: 'test-bot' } : {}),
              }),
            ),
          );
          tasks.push(...made);
        } else if (roll < 0.4) {
          await adminGet(t, `/api/v1/admin/tasks/${id}`); // the first view stamps seen_by_operator_at
        } else if (roll < 0.55) {
          await patch(t, id, next() < 0.5 ? { status: 'accepted' } : { status: 'accepted', eta: new Date(clock.now().getTime() + 86_400_000).toISOString() });
        } else if (roll < 0.68) {
          await patch(t, id, { status: 'delivered', operator_notes: 'Done: it opens at 8.' });
        } else if (roll < 0.78) {
          await patch(t, id, { status: 'rejected', operator_notes: 'Out of scope.' });
        } else if (roll < 0.83) {
          await patch(t, id, { operator_notes: 'A draft note.' }); // no status change, but a first view
        } else if (roll < 0.88) {
          const records = [deliveredRecord(), rejectedRecord(), openRecord(pick(['under_review', 'in_progress', 'submitted', 'accepted'] as const))];
          await importOk(t, records.slice(0, 1 + Math.floor(next() * 3)));
        } else if (roll < 0.95) {
          clock.advance(Math.floor(next() * 3 * 86_400_000)); // across days: the day counts
        } else {
          clock.advance(6 * 86_400_000);
          await runRetention(t.deps); // erases tasks final for over RETENTION_DAYS
        }
        if (step % 30 === 29) await recount();
      }
      await recount();
      const counts = await storedTaskCounts(t.store.db);
      expect(
        [...counts.keys()].some((key) => key.startsWith('all|')),
        `seed ${seed}`,
      ).toBe(true);
    });
  });
}
