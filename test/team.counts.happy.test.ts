import { describe, expect, it } from 'vitest';
import { OPEN_STATUSES, type TaskStatus } from '../src/domain/tasks/task.js';
import { OWNER } from '../src/domain/team/actor.js';
import { sweepDeadlines } from '../src/services/tasks/deadlines.js';
import { assignmentCounts } from '../src/services/team/operators.js';
import { migrations } from '../src/store/migrations/index.js';
import { openAssignedCounts, recountOpenAssigned } from '../src/store/team/assignments-repo.js';
import { patch, submit } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';
import { seededRandom } from './support/random.js';
import { api, json, newOperator } from './team.support.js';

/**
 * Issue 26: the queue's Mine / Unassigned counts come from counts kept in the transaction of each
 * change (assignment_counts, migration 190), never from counting the queue. They must agree with a
 * full recount after a randomized sequence of every change that moves them: assignments, hand-overs
 * and unassignments, acceptances, deliveries and rejections (with and without an assignee in the
 * same PATCH), racing PATCHes, refused transitions, deadlines rejecting submitted tasks, a disabled assignee.
 */

for (const store of STORES) {
  describe(`kept assignment counts (${store})`, () => {
    const clock = new TestClock('2030-03-01T10:00:00.000Z');
    const t = useTestApp({ store, clock });

    it('agree with a full recount after a randomized sequence of changes', async () => {
      const seed = Number(process.env.COUNTS_SEED ?? Date.now() % 100_000);
      const next = seededRandom(seed);
      const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(next() * items.length)];
      const operators = [await newOperator(t), await newOperator(t), await newOperator(t)];
      const ids = operators.map((op) => op.operator_id);
      const tasks: string[] = [];

      const check = async () => {
        const kept = Object.fromEntries(await openAssignedCounts(t.store.db));
        const recounted = Object.fromEntries(await recountOpenAssigned(t.store.db));
        expect(kept, `seed ${seed}`).toEqual(recounted);
        // What the console shows: Mine for each operator, Unassigned for everyone.
        const open = (
          await t.store.db
            .selectFrom('tasks')
            .select('id')
            .where('status', 'in', [...OPEN_STATUSES])
            .execute()
        ).length;
        const assigned = Object.values(recounted).reduce((sum, n) => sum + n, 0);
        expect((await assignmentCounts(t.deps, OWNER)).unassigned, `seed ${seed}`).toBe(open - assigned);
        for (const operatorId of ids) {
          const shown = await assignmentCounts(t.deps, { kind: 'operator', operatorId, role: 'operator' });
          expect(shown.mine, `seed ${seed} ${operatorId}`).toBe(recounted[operatorId] ?? 0);
        }
      };

      for (let step = 0; step < 90; step++) {
        const roll = next();
        const id = pick(tasks);
        const assignee = next() < 0.25 ? null : (pick(ids) ?? null);
        if (roll < 0.22 || id === undefined) {
          const deadline = next() < 0.3 ? { deadline: new Date(clock.now().getTime() + 3_600_000).toISOString() } : {};
          tasks.push(await submit(t, { description: `Check the opening hours of shop number ${step} on Main Street.`, ...deadline }));
        } else if (roll < 0.5) {
          await patch(t, id, { assignee }); // also on final tasks: held, but not open
        } else if (roll < 0.62) {
          await patch(t, id, next() < 0.5 ? { status: 'accepted' } : { status: 'accepted', assignee });
        } else if (roll < 0.74) {
          await patch(
            t,
            id,
            next() < 0.5 ? { status: 'delivered', operator_notes: 'Done: it opens at 8.' } : { status: 'delivered', operator_notes: 'Done.', assignee },
          );
        } else if (roll < 0.8) {
          await patch(t, id, { status: 'rejected', operator_notes: 'Out of scope.', ...(next() < 0.5 ? { assignee } : {}) });
        } else if (roll < 0.88) {
          // Racing operators: assignments and transitions of a few tasks at once (row locks on PostgreSQL).
          const few = Array.from({ length: 4 }, () => pick(tasks.slice(-6)) ?? id);
          const raced = await Promise.all(
            few.map((task, i) =>
              patch(
                t,
                task,
                i % 2 === 0 ? { assignee: pick(ids) ?? null } : next() < 0.5 ? { status: 'accepted' } : { status: 'rejected', operator_notes: 'Raced.' },
              ),
            ),
          );
          // Refused (409, 422) or done, never a failure such as a deadlock.
          for (const res of raced) expect([200, 409, 422], `seed ${seed}`).toContain(res.status);
        } else if (roll < 0.92) {
          clock.advance(2 * 3_600_000);
          await sweepDeadlines(t.deps); // rejects submitted tasks past their deadline
        } else if (roll < 0.95) {
          // A disabled operator keeps the tasks they held (and their count); new assignments to them are refused.
          const op = pick(ids.slice(1));
          if (op) await json(await api(t, 'PATCH', `/api/v1/admin/operators/${op}`, { disabled: next() < 0.5 }), 200);
        } else {
          await patch(t, id, { status: pick(['submitted', 'accepted'] as TaskStatus[]) }); // often refused (409)
        }
        if (step % 30 === 29) await check();
      }
      // Some seeds (674) leave no open task assigned; the recount below and the upgrade test need
      // one. The first operator is never disabled above.
      const last = await submit(t, { description: 'Check the opening hours of the last shop on Main Street.' });
      expect((await patch(t, last, { assignee: ids[0] ?? null })).status, `seed ${seed}`).toBe(200);
      await check();
      expect(Object.keys(Object.fromEntries(await recountOpenAssigned(t.store.db))).length, `seed ${seed}`).toBeGreaterThan(0);
    });

    it('are filled by the upgrade from the assignments made before it', async () => {
      const kept = Object.fromEntries(await openAssignedCounts(t.store.db));
      expect(Object.keys(kept).length).toBeGreaterThan(0);
      // Back to the schema before migration 190, with the assignments of the test above; then up.
      await t.store.db.schema.dropTable('assignment_counts').execute();
      await t.store.db.schema.dropIndex('push_subscriptions_operator_idx').execute();
      await t.store.db.schema.alterTable('push_subscriptions').dropColumn('operator_id').execute();
      await migrations['190_team_alerts_counts']?.up(t.store.db);
      expect(Object.fromEntries(await openAssignedCounts(t.store.db))).toEqual(kept);
    });
  });
}
