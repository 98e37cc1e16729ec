import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';
import { api, json, newOperator } from './team.support.js';

/** The team page's forms: CSRF on each, roles, and markup in names and e-mails shown as text. */
describe.each(STORES)('team console on %s', (store) => {
  const t = useTestApp({ store });

  it('refuses every new team form without the CSRF token, changing nothing', async () => {
    const op = await newOperator(t);
    const owner = await signIn(t, TEST_ADMIN_KEY);
    const mine = await signIn(t, op.key);
    const forms: [string, Record<string, string>, string][] = [
      ['/operator/team/invite', { name: 'X', email: 'x-csrf@team.example.org', role: 'admin' }, owner.cookie],
      [`/operator/team/${op.operator_id}`, { role: 'admin' }, owner.cookie],
      [`/operator/team/${op.operator_id}`, { disabled: 'true' }, owner.cookie],
      ['/operator/keys', {}, mine.cookie],
      [`/operator/keys/${op.key_id}/revoke`, {}, mine.cookie],
      ['/operator/duty', { on_duty: '1' }, mine.cookie],
    ];
    for (const [path, fields, cookie] of forms) {
      expect((await postForm(t, path, fields, cookie)).status, path).toBe(403);
      expect((await postForm(t, path, { ...fields, _csrf: 'forged' }, cookie)).status, path).toBe(403);
    }
    const operators = (await json(await api(t, 'GET', '/api/v1/admin/operators'), 200)).operators as {
      operator_id: string;
      email: string;
      role: string;
      disabled: boolean;
      on_duty: boolean;
    }[];
    expect(operators.some((o) => o.email === 'x-csrf@team.example.org')).toBe(false);
    expect(operators.find((o) => o.operator_id === op.operator_id)).toMatchObject({ role: 'operator', disabled: false, on_duty: false });
    const keys = await json(await api(t, 'GET', `/api/v1/admin/operators/${op.operator_id}/keys`), 200);
    expect(keys.keys).toEqual([{ key_id: op.key_id, created_at: expect.any(String), revoked_at: null }]);
  });

  it('lets an admin invite, demote and disable through the page; an operator manages only their own keys and duty', async () => {
    const owner = await signIn(t, TEST_ADMIN_KEY);
    const invited = await postForm(
      t,
      '/operator/team/invite',
      { _csrf: owner.csrf, name: '<b>Bold</b> & "quoted"', email: 'bold@team.example.org', role: 'operator' },
      owner.cookie,
    );
    const page = await invited.text();
    expect(invited.status).toBe(200);
    expect(page).toMatch(/\/operator\/invite\/[A-Za-z0-9_-]{43}/);
    expect(page).toContain('&lt;b&gt;Bold&lt;/b&gt; &amp; &quot;quoted&quot;');
    expect(page).not.toContain('<b>Bold</b>');
    const refused = await postForm(t, '/operator/team/invite', { _csrf: owner.csrf, name: 'Bad', email: '<script>@x', role: 'operator' }, owner.cookie);
    expect(refused.status).toBe(422);
    expect(await refused.text()).not.toContain('<script>@x');

    const op = await newOperator(t);
    const mine = await signIn(t, op.key);
    expect((await postForm(t, '/operator/duty', { _csrf: mine.csrf, on_duty: '1' }, mine.cookie)).status).toBe(303);
    const created = await postForm(t, '/operator/keys', { _csrf: mine.csrf }, mine.cookie);
    expect(await created.text()).toMatch(/hto_[A-Za-z0-9_-]{43}/);
    // An operator may not manage the team.
    expect((await postForm(t, `/operator/team/${op.operator_id}`, { _csrf: mine.csrf, role: 'admin' }, mine.cookie)).status).toBe(403);
    const team = await (await fetch(`${t.url}/operator/team`, { headers: { cookie: mine.cookie } })).text();
    expect(team).not.toContain('Invite an operator');
    // The admin disables them: the session ends at once.
    expect((await postForm(t, `/operator/team/${op.operator_id}`, { _csrf: owner.csrf, disabled: 'true' }, owner.cookie)).status).toBe(303);
    const after = await fetch(`${t.url}/operator/team`, { headers: { cookie: mine.cookie }, redirect: 'manual' });
    expect(after.status).toBe(303);
    const listed = (await json(await api(t, 'GET', '/api/v1/admin/operators'), 200)).operators as {
      operator_id: string;
      on_duty: boolean;
      disabled: boolean;
    }[];
    expect(listed.find((o) => o.operator_id === op.operator_id)).toMatchObject({ on_duty: true, disabled: true });
  });
});
