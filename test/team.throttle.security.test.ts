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

/**
 * Failed sign-ins do not fill the audit log (issue 49, item 3): from one address, one row per
 * failure up to the limit, then one `signin.throttled` row for the window; the rest are counted in
 * signin_failures, not written one by one, whichever instance answers.
 */
describe.each(STORES)('the audit log under a flood of failed sign-ins on %s', (store) => {
  const env = {
    ADMIN_FAILURES_PER_MINUTE: '10',
    ADMIN_FAILURES_GLOBAL_PER_MINUTE: '100000',
    ADMIN_FAILURE_DELAY_MS: '0',
    AUTO_BLOCK_REFUSALS: '100000',
    TRUST_PROXY: '1',
  };
  const first = useTestApp({ store, env });

  const signInEntries = async (via: string) => {
    const res = await fetch(`${first.url}/api/v1/admin/audit?limit=200`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } });
    const entries = ((await res.json()) as { entries: { action: string; details: { via?: string; client?: string } }[] }).entries;
    return entries.filter((e) => e.action.startsWith('signin.') && e.details.via === via);
  };
  const tally = (values: (string | number)[]) => Object.fromEntries([...new Set(values)].map((v) => [v, values.filter((x) => x === v).length]));

  it('60 wrong keys from one address: 10 rows, one throttling entry', async () => {
    const second = await startTestApp({ store, env, shareDatabaseWith: first });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 60; i += 1) {
        const t = i % 2 === 0 ? first : second;
        const res = await fetch(`${t.url}/operator/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '198.51.100.60' },
          body: new URLSearchParams({ key: `wrong-key-${i}` }).toString(),
          redirect: 'manual',
        });
        statuses.push(res.status);
      }
      expect(tally(statuses)).toEqual({ 401: 10, 429: 50 });
      const entries = await signInEntries('key');
      expect(tally(entries.map((e) => e.action))).toEqual({ 'signin.failed': 10, 'signin.throttled': 1 });
      expect(new Set(entries.map((e) => e.details.client)).size).toBe(1);
    } finally {
      await second.close();
    }
  });

  it('60 failed passkey sign-ins from one address: the same bound', async () => {
    const second = await startTestApp({ store, env, shareDatabaseWith: first });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 60; i += 1) {
        const t = i % 2 === 0 ? first : second;
        const res = await fetch(`${t.url}/operator/passkey/signin`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.61', origin: new URL(t.config.baseUrl).origin },
          body: JSON.stringify({ challenge_id: `nope-${i}`, response: { id: `cred-${i}` } }),
        });
        statuses.push(res.status);
      }
      expect(tally(statuses)).toEqual({ 401: 10, 429: 50 });
      expect(tally((await signInEntries('passkey')).map((e) => e.action))).toEqual({ 'signin.failed': 10, 'signin.throttled': 1 });
      // The address is throttled, not the operator: the right key still signs in from it.
      const right = await fetch(`${second.url}/operator/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '198.51.100.61' },
        body: new URLSearchParams({ key: TEST_ADMIN_KEY }).toString(),
        redirect: 'manual',
      });
      expect(right.status).toBe(303);
    } finally {
      await second.close();
    }
  });
});
