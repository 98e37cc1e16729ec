import { describe, expect, it } from 'vitest';
import { postForm } from './console.support.js';
import { STORES, startTestApp, TEST_ADMIN_KEY, useTestApp } from './support/app.js';

/**
 * Failed sign-ins are counted in the store (contract "A team of operators"): two instances on one
 * database together allow the per-address limit once, not once each.
 */
describe.each(STORES)('failed sign-ins across instances on %s', (store) => {
  const env = { ADMIN_FAILURES_PER_MINUTE: '3', ADMIN_FAILURES_GLOBAL_PER_MINUTE: '1000', ADMIN_FAILURE_DELAY_MS: '0', AUTO_BLOCK_REFUSALS: '1000' };
  const first = useTestApp({ store, env });

  it('throttles the fourth failure from one address, wherever it lands, and never the right key', async () => {
    const second = await startTestApp({ store, env, shareDatabaseWith: first });
    try {
      const statuses: number[] = [];
      for (const t of [first, second, first, second]) statuses.push((await postForm(t, '/operator/login', { key: 'wrong-key-0123456789' })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      expect((await postForm(second, '/operator/login', { key: TEST_ADMIN_KEY })).status).toBe(303);
    } finally {
      await second.close();
    }
  });
});
