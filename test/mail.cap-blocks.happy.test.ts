import { describe, expect, it } from 'vitest';
import { dailyCapUsage } from '../src/abuse/quotas.js';
import { CapUnits } from '../src/mail/cap-units.js';
import { startOutboxWorker } from '../src/services/delivery/mail-worker.js';
import { postJson, STORES, useTestApp, validTask } from './support/app.js';
import { waitUntil } from './support/smtp.js';

/**
 * Issue 28: the mail worker takes units of the daily e-mail cap in blocks (mail/cap-units.ts), not
 * one counter write per mail, and gives back what it did not use once the outbox is empty, so the
 * day's count is exactly the mail that went out. (Near the cap it takes units one at a time:
 * mail.error's cap and digest tests hold that.)
 */
for (const store of STORES) {
  describe(`e-mail cap units in blocks (${store})`, () => {
    let capWrites = 0;
    let claimStatements = 0;
    const t = useTestApp({
      store,
      smtp: true,
      env: { TRUST_PROXY: '1', OPERATOR_EMAIL: 'operator@ops.example-service.dev', MAIL_POLL_MS: '20', DAILY_EMAIL_CAP: '1000' },
      onQuery: (query) => {
        if (/^insert into "counters"/.test(query.sql) && query.parameters.some((p) => String(p).startsWith('cap:emails:'))) capWrites += 1;
        // The claim: one statement on SQLite, the SELECT … FOR UPDATE of the claim on PostgreSQL.
        if (/from "outbox" where "status" = \S+ and "claim_rank" = /.test(query.sql)) claimStatements += 1;
      },
    });

    it('twenty mails cost a few cap writes, and the count is what went out', async () => {
      for (let i = 0; i < 20; i++) {
        const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: `agent${i}@mail.example-agent.dev` }), {
          'x-forwarded-for': `198.51.100.${i + 1}`,
        });
        expect(res.status).toBe(202);
      }
      // All twenty are queued before the worker starts: one backlog, as behind a flood (a worker
      // that found the outbox empty between submissions would give its block back each time).
      const worker = startOutboxWorker(t.deps, { ...t.config.mail, pollMs: 10 });
      try {
        await t.smtp.waitFor(20);
        await waitUntil(async () => (await dailyCapUsage(t.deps)).emails.used === 20, 10_000, 'the cap count to settle at 20');
      } finally {
        await worker.stop();
      }
      expect((await dailyCapUsage(t.deps)).emails.used).toBe(20);
      // A block per sending slot at most, and the give-back of the rest: not a write per mail.
      expect(capWrites).toBeLessThan(10);
    });

    it('a worker that keeps up with a trickle keeps its block and claims once per pass', async () => {
      let claims = 0;
      const sentBefore = t.smtp.received.length;
      const usedBefore = (await dailyCapUsage(t.deps)).emails.used;
      const worker = startOutboxWorker(t.deps, { ...t.config.mail, pollMs: 1000 });
      try {
        capWrites = 0;
        claimStatements = 0;
        for (let i = 0; i < 30; i++) {
          const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: `Trickle ${i}: count the benches in the park.` }), {
            'x-forwarded-for': `192.0.2.${100 + i}`,
          });
          expect(res.status).toBe(202);
          // Each mail goes out before the next comes: the outbox is empty between them.
          await t.smtp.waitFor(i + 1 + sentBefore);
        }
        claims = claimStatements;
        // One block for the lot (it went back and came again with every mail before), and its rest
        // given back once the worker has been idle a second.
        await waitUntil(async () => (await dailyCapUsage(t.deps)).emails.used === usedBefore + 30, 10_000, 'the count to settle');
        expect(capWrites).toBeLessThanOrEqual(3);
        // A pass that took every due mail ends without another claim that finds nothing: one claim
        // a mail here, which is a statement per rank (requester mail, then notifications).
        expect(claims).toBeLessThanOrEqual(2 * 30 + 6);
      } finally {
        await worker.stop();
      }
    });

    it('many mails asking at once share one block: one store write per 32 units, not one per asker', async () => {
      const units = new CapUnits(t.store.db, 1000);
      const now = t.clock.now();
      capWrites = 0;
      const taken = await Promise.all(Array.from({ length: 40 }, () => units.inTurn(() => units.take('task_submitted', now))));
      expect(taken.every(Boolean)).toBe(true);
      // Two blocks (32 + 8 of the second): two conditional upserts.
      expect(capWrites).toBe(2);
      const before = (await dailyCapUsage(t.deps)).emails.used;
      await units.giveBack();
      // The second block's 24 unused units go back.
      expect((await dailyCapUsage(t.deps)).emails.used).toBe(before - 24);
    });
  });
}
