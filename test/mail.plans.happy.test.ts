import { describe, expect, it } from 'vitest';
import { postJson, STORES, useTestApp, validTask } from './support/app.js';
import { planProblems } from './support/plans.js';
import { driveTransition, waitUntil } from './support/smtp.js';

/**
 * Issue 28, the default path: the mail worker's statements (claim by rank, lease renewal, the
 * batched "sent" marks) read only the rows they name. Behind a flood the outbox holds thousands
 * of pending mails; a claim that sorted them all, or a mark that walked them through a status
 * index (SQLite chose `status = 'pending'` over `id IN (…)`), cost milliseconds per mail and the
 * outbox fell ever further behind.
 */
for (const store of STORES) {
  describe(`the mail worker's query plans (${store})`, () => {
    const seen = new Map<string, readonly unknown[]>();
    let capturing = false;
    const t = useTestApp({
      store,
      smtp: true,
      background: true,
      env: { TRUST_PROXY: '1', OPERATOR_EMAIL: 'operator@ops.example-service.dev', MAIL_POLL_MS: '20' },
      onQuery: (query) => {
        if (capturing) seen.set(query.sql, query.parameters);
      },
    });

    it('claims and marks mail through keys and the claim index', async () => {
      capturing = true;
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: `agent${i}@mail.example-agent.dev` }), {
          'x-forwarded-for': `198.51.100.${i + 1}`,
        });
        expect(res.status).toBe(202);
        ids.push(((await res.json()) as { task_id: string }).task_id);
      }
      // Requester mail (rank 0) beside the operator's notifications (rank 1).
      for (const id of ids.slice(0, 3)) await driveTransition(t, id, { status: 'accepted' });
      await t.smtp.waitFor(15);
      // The marks follow the sends in batches: wait until every mail is marked sent.
      await waitUntil(async () => {
        const pending = await t.store.db.selectFrom('outbox').select('id').where('status', '=', 'pending').limit(1).execute();
        return pending.length === 0;
      });
      capturing = false;

      const statements = [...seen.keys()];
      expect(
        statements.some((s) => /from "outbox" where .*"claim_rank" = /.test(s)),
        'the claim by rank',
      ).toBe(true);
      expect(
        statements.some((s) => /^update "outbox" set "status" = .* where "id" in \(/.test(s)),
        'the batched mark',
      ).toBe(true);
      // The worker's statements: those on the two outboxes (the submissions' own are scale.plans's).
      const worker = new Map([...seen].filter(([statement]) => /\b(outbox|webhook_outbox)\b/.test(statement)));
      const problems = await planProblems(t, worker);
      expect(problems, problems.join('\n')).toEqual([]);
    });
  });
}
