import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signToken } from '../src/services/runtime/signed-token.js';
import { postForm, signIn } from './console.support.js';
import { STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, useTestApp } from './support/app.js';
import { api, json, newOperator } from './team.support.js';

/**
 * A console session lives only as long as what it was opened with (issue 49, item 1): revoking the
 * personal key a session was opened with ends it at once on every instance; another session of
 * the same operator, opened with another key, goes on. (The passkey case runs in Chromium:
 * team.passkeys.happy.test.ts.)
 */
describe.each(STORES)('console sessions and the key they were opened with on %s', (store) => {
  const first = useTestApp({ store });

  const open = (t: TestApp, path: string, cookie: string) => fetch(`${t.url}${path}`, { headers: { cookie }, redirect: 'manual' });

  it('ends every session opened with a key when the key is revoked, on both instances', async () => {
    const second = await startTestApp({ store, shareDatabaseWith: first });
    try {
      const op = await newOperator(first, 'admin');
      const session = await signIn(first, op.key);
      // Another key of the same operator, and the owner: their sessions are not the revoked key's.
      const other = await json(await api(first, 'POST', `/api/v1/admin/operators/${op.operator_id}/keys`), 201);
      const otherSession = await signIn(second, other.key as string);
      const owner = await signIn(first, TEST_ADMIN_KEY);
      for (const t of [first, second]) expect((await open(t, '/operator/team', session.cookie)).status).toBe(200);

      expect((await api(second, 'DELETE', `/api/v1/admin/operators/${op.operator_id}/keys/${op.key_id}`)).status).toBe(204);
      expect((await api(first, 'GET', `/api/v1/admin/operators/${op.operator_id}/keys`, undefined, op.auth)).status).toBe(401);

      for (const t of [first, second]) {
        const page = await open(t, '/operator/team', session.cookie);
        expect(page.status).toBe(303);
        expect(page.headers.get('location')).toMatch(/^\/operator\/login/);
        // Minting a key, inviting an admin: refused, nothing made.
        const minted = await postForm(t, '/operator/keys', { _csrf: session.csrf }, session.cookie);
        expect(minted.status).toBe(303);
        expect(minted.headers.get('location')).toMatch(/^\/operator\/login/);
        const invited = await postForm(
          t,
          '/operator/team/invite',
          { _csrf: session.csrf, name: 'Back door', email: `back-${t.url.length}@x.example.org`, role: 'admin' },
          session.cookie,
        );
        expect(invited.status).toBe(303);
      }
      const keys = (await json(await api(first, 'GET', `/api/v1/admin/operators/${op.operator_id}/keys`), 200)).keys as { key_id: string }[];
      expect(keys.map((k) => k.key_id).sort()).toEqual([op.key_id, other.key_id as string].sort());
      const operators = (await json(await api(first, 'GET', '/api/v1/admin/operators'), 200)).operators as { email: string }[];
      expect(operators.some((o) => o.email.startsWith('back-'))).toBe(false);

      for (const t of [first, second]) {
        expect((await open(t, '/operator/team', otherSession.cookie)).status).toBe(200);
        expect((await open(t, '/operator', owner.cookie)).status).toBe(200);
      }
      // Revoked from the console's own keys page, on the other instance: the same.
      const revoked = await postForm(second, `/operator/keys/${other.key_id as string}/revoke`, { _csrf: otherSession.csrf }, otherSession.cookie);
      expect(revoked.status).toBe(303);
      for (const t of [first, second]) expect((await open(t, '/operator/team', otherSession.cookie)).status).toBe(303);
    } finally {
      await second.close();
    }
  });

  it('refuses a session cookie from before sessions named their key, and one naming a key it was not opened with', async () => {
    const op = await newOperator(first);
    const key = createHmac('sha256', first.deps.secret).update('operator-session\n').update(first.deps.adminKeyHash).digest();
    const exp = Math.floor(first.clock.now().getTime() / 1000) + 3600;
    const cookieOf = (fields: Record<string, unknown>) =>
      `hts_operator=${signToken(key, 'operator-session', JSON.stringify({ sid: randomBytes(18).toString('base64url'), exp, ...fields }))}`;
    // Forged here with the server's own secret, as an older version signed them: the format is what is checked.
    expect((await open(first, '/operator', cookieOf({ via: 'admin' }))).status).toBe(200);
    expect((await open(first, '/operator', cookieOf({ op: op.operator_id, via: `key:${op.key_id}` }))).status).toBe(200);
    for (const fields of [
      {},
      { op: op.operator_id },
      { op: op.operator_id, via: 'admin' },
      { via: `key:${op.key_id}` },
      { op: op.operator_id, via: 'key:key-0000' },
      { op: op.operator_id, via: `passkey:${op.key_id}` },
      { op: op.operator_id, via: 'key:' },
      { op: op.operator_id, via: 42 },
    ]) {
      const res = await open(first, '/operator', cookieOf(fields));
      expect(res.status, JSON.stringify(fields)).toBe(303);
      expect(res.headers.get('location')).toMatch(/^\/operator\/login/);
    }
  });
});
