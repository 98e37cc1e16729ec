import { describe, expect, it } from 'vitest';
import { addCounts, readCounters } from '../src/store/abuse-control/counters-repo.js';
import { insertOutbox } from '../src/store/delivery/outbox-repo.js';
import { STORES, useTestApp } from './support/app.js';

/**
 * Issue 28: a batch's multi-row writes are compiled once per row count and reused (store/prepared.ts
 * reusableRows). What they write must not depend on that: every chunk size a batch is cut into,
 * a row that leaves a column to its default, and a row already there (kept, not returned).
 */

const mail = (n: number, over: Record<string, unknown> = {}) => ({
  id: `mail-reused-${n}`,
  kind: 'task_submitted',
  recipient: `operator${n}@ops.example-service.dev`,
  reply_to: null,
  subject: `Mail ${n}`,
  text_body: `Body ${n}`,
  html_body: `<p>Body ${n}</p>`,
  task_id: null,
  message_id: null,
  status: 'pending',
  attempts: 0,
  next_attempt_at: '2030-03-10T10:00:00.000Z',
  locked_until: null,
  last_error: null,
  created_at: '2030-03-10T10:00:00.000Z',
  sent_at: null,
  in_reply_to: null,
  claim_rank: n % 3,
  claim_token: null,
  ...over,
});

for (const store of STORES) {
  describe(`reused batch writes (${store})`, () => {
    const t = useTestApp({ store });

    it('write every row of every chunk size, and a row that leaves a column out', async () => {
      let n = 0;
      for (const size of [1, 2, 3, 5, 37, 70]) {
        const rows = Array.from({ length: size }, () => mail(++n));
        const written = await insertOutbox(t.store.db, rows);
        expect([...written].sort()).toEqual(rows.map((r) => r.id).sort());
      }
      // A row that leaves a column out (to its default) is written too, by the builder.
      const { in_reply_to: _left, ...partial } = mail(++n, { claim_rank: 2 });
      expect([...(await insertOutbox(t.store.db, partial))]).toEqual([partial.id]);
      const stored = await t.store.db.selectFrom('outbox').select(['in_reply_to', 'claim_rank']).where('id', '=', partial.id).executeTakeFirstOrThrow();
      expect([stored.in_reply_to, Number(stored.claim_rank)]).toEqual([null, 2]);
      const total = await t.store.db
        .selectFrom('outbox')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(total.n)).toBe(n);
    });

    it('leave a mail already queued as it was and do not report it written', async () => {
      await insertOutbox(t.store.db, [mail(1000), mail(1001)]);
      const again = await insertOutbox(t.store.db, [mail(1000, { subject: 'changed' }), mail(1002), mail(1001, { subject: 'changed' })]);
      expect([...again]).toEqual(['mail-reused-1002']);
      const first = await t.store.db.selectFrom('outbox').select('subject').where('id', '=', 'mail-reused-1000').executeTakeFirstOrThrow();
      expect(first.subject).toBe('Mail 1000');
    });

    it('add to counters in chunks of every size, returning each total', async () => {
      const keys = Array.from({ length: 45 }, (_, i) => `reused:${i}`);
      const once = await addCounts(
        t.store.db,
        keys.map((key, i) => ({ key, count: i + 1, expiresAt: '2030-03-11T00:00:00.000Z' })),
      );
      expect(once.get('reused:44')).toBe(45);
      const twice = await addCounts(
        t.store.db,
        keys.slice(0, 7).map((key) => ({ key, count: 10, expiresAt: '2030-03-11T00:00:00.000Z' })),
      );
      expect([...twice.values()].sort((a, b) => a - b)).toEqual([11, 12, 13, 14, 15, 16, 17]);
      const stored = await readCounters(t.store.db, keys);
      expect(stored.get('reused:0')).toBe(11);
      expect(stored.get('reused:10')).toBe(11);
      expect(stored.size).toBe(45);
    });
  });
}
