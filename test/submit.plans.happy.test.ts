import { describe, expect, it } from 'vitest';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';
import { planProblems } from './support/plans.js';

/**
 * Issue 28, the default path: every statement of a submission (the screening of a new e-mail
 * domain, the group commit's reads and writes, the blocklist's networks) reads only the rows it
 * names. These run once per submission or batch, from every address there is: a scan of the
 * blocklist or the counters would grow with the crowd.
 */
for (const store of STORES) {
  describe(`a submission's query plans (${store})`, () => {
    const seen = new Map<string, readonly unknown[]>();
    let capturing = false;
    const t = useTestApp({
      store,
      env: { TRUST_PROXY: '1', OPERATOR_EMAIL: 'operator@ops.example-service.dev' },
      onQuery: (query) => {
        if (capturing) seen.set(query.sql, query.parameters);
      },
    });

    it('reads blocks, counters, duplicates and keys only through indexes', async () => {
      const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
      expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: '203.0.113.0/24' }, admin)).status).toBe(201);
      expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'domain', value: 'spam.example-agent.dev' }, admin)).status).toBe(201);
      capturing = true;
      const submissions = Array.from({ length: 12 }, (_, i) =>
        postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: `agent${i}@mail${i % 3}.example-agent.dev` }), {
          'x-forwarded-for': `198.51.100.${i + 1}`,
          ...(i % 2 === 0 ? { 'idempotency-key': `plans-${i}` } : {}),
        }),
      );
      for (const res of await Promise.all(submissions)) expect(res.status).toBe(202);
      expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '203.0.113.9' })).status).toBe(403);
      capturing = false;
      const statements = [...seen.keys()];
      expect(
        statements.some((s) => /from "blocklist"/.test(s)),
        'the blocklist',
      ).toBe(true);
      expect(
        statements.some((s) => /from "counters"/.test(s)),
        'the counters',
      ).toBe(true);
      const problems = await planProblems(t, seen);
      expect(problems, problems.join('\n')).toEqual([]);
    });
  });
}
