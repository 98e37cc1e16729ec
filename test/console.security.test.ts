import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { type Json, submit, taskIn } from './operator.support.js';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, TestClock, useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';

const HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> Please check "the" shop & report `hours`.';

describe.each(STORES)('operator console security on %s', (store) => {
  const clock = new TestClock(new Date());
  const t = useTestApp({ store, clock });
  const browser = useBrowser();

  it('renders a description carrying <script> as text, in the queue and on the task', async () => {
    const id = await submit(t, { description: HOSTILE, requester: '<b>bold-bot</b>', location_detail: '<i>Main St</i>' });
    await postJson(`${t.url}/api/v1/messages`, {
      message: `About ${id}: <script>window.__pwned = 3</script>`,
      reply_to: 'agent@mail.example-agent.dev',
      subject: '<img src=x onerror="window.__pwned=4">',
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    await page.goto(`${t.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${t.url}/operator`);

    for (const path of ['/operator', `/operator/tasks/${id}`, '/operator/messages']) {
      await page.goto(`${t.url}${path}`);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await page.locator('script:not([src])').count()).toBe(0);
      expect(await page.locator('main img, main b, main i').count()).toBe(0);
    }
    await page.goto(`${t.url}/operator/tasks/${id}`);
    expect(await page.locator('.prose').first().textContent()).toBe(HOSTILE);
    expect(await page.getByText('<b>bold-bot</b>').count()).toBe(1);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it('serves every console page with a strict CSP and no caching, and never to a signed-out visitor', async () => {
    const { cookie } = await signIn(t);
    const res = await fetch(`${t.url}/operator`, { headers: { cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');

    const id = await submit(t);
    for (const path of [
      '/operator',
      `/operator/tasks/${id}`,
      '/operator/messages',
      '/operator/blocklist',
      '/operator/outbox',
      '/operator/stats',
      '/operator/service-level',
    ]) {
      const anon = await fetch(`${t.url}${path}`, { redirect: 'manual' });
      expect(anon.status, path).toBe(303);
      expect(anon.headers.get('location')).toBe(`/operator/login?next=${encodeURIComponent(path)}`);
    }
    // Looking without signing in stamps nothing.
    expect(((await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json).seen_by_operator_at).toBeNull();
  });

  it('sets an HttpOnly, SameSite=Strict cookie scoped to /operator, and refuses a wrong key', async () => {
    const ok = await postForm(t, '/operator/login', { key: TEST_ADMIN_KEY });
    expect(ok.status).toBe(303);
    const set = ok.headers.get('set-cookie') ?? '';
    expect(set).toMatch(/^hts_operator=[\w-]+\.[\w-]+;/);
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Strict');
    expect(set).toContain('Path=/operator');
    expect(set).not.toContain('Secure');

    const wrong = await postForm(t, '/operator/login', { key: 'not-the-key-0123456789' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(wrong.headers.get('www-authenticate')).toBeNull();
    expect(await wrong.text()).toContain('That is not the operator key.');
  });

  it('marks the cookie Secure when BASE_URL is https', async () => {
    const https = await startTestApp({ store, env: { BASE_URL: 'https://desk.example-host.dev' } });
    try {
      const res = await postForm(https, '/operator/login', { key: TEST_ADMIN_KEY });
      expect(res.headers.get('set-cookie')).toContain('; Secure');
    } finally {
      await https.close();
    }
  });

  it('refuses forged, tampered and expired sessions', async () => {
    const { cookie } = await signIn(t);
    const [name, value = ''] = cookie.split('=');
    const [payload = '', mac = ''] = value.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { sid: string; exp: number };
    const longer = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 86_400 * 365 })).toString('base64url');
    for (const forged of [`${name}=${longer}.${mac}`, `${name}=${payload}.${mac.slice(0, -2)}AA`, `${name}=${payload}`, `${name}=garbage`]) {
      const res = await fetch(`${t.url}/operator`, { headers: { cookie: forged }, redirect: 'manual' });
      expect(res.status, forged).toBe(303);
    }
    clock.advance(12 * 3600_000 + 1000);
    try {
      const expired = await fetch(`${t.url}/operator`, { headers: { cookie }, redirect: 'manual' });
      expect(expired.status).toBe(303);
      expect(expired.headers.get('location')).toMatch(/^\/operator\/login/);
    } finally {
      clock.set(new Date());
    }
  });

  it('makes a signed-out session useless, even to a copy of its cookie, on every instance', async () => {
    const { cookie, csrf } = await signIn(t);
    const other = await signIn(t);
    const second = await startTestApp({ shareDatabaseWith: t });
    try {
      expect((await fetch(`${t.url}/operator`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);
      const out = await postForm(t, '/operator/logout', { _csrf: csrf }, cookie);
      expect(out.status).toBe(303);
      expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
      for (const app of [t, second]) {
        const copied = await fetch(`${app.url}/operator`, { headers: { cookie }, redirect: 'manual' });
        expect(copied.status).toBe(303);
        expect(copied.headers.get('location')).toMatch(/^\/operator\/login/);
      }
      // Another session stays signed in.
      expect((await fetch(`${t.url}/operator`, { headers: { cookie: other.cookie }, redirect: 'manual' })).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('signs everyone out when the operator key changes', async () => {
    const { cookie } = await signIn(t);
    const rekeyed = await startTestApp({ shareDatabaseWith: t, env: { ADMIN_KEY: 'a-brand-new-operator-key-42' } });
    try {
      const res = await fetch(`${rekeyed.url}/operator`, { headers: { cookie }, redirect: 'manual' });
      expect(res.status).toBe(303);
      expect((await fetch(`${t.url}/operator`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);
    } finally {
      await rekeyed.close();
    }
  });

  it('refuses a POST without the session’s CSRF token, changing nothing', async () => {
    const id = await submit(t);
    const { cookie, csrf } = await signIn(t);
    const other = await signIn(t);
    for (const token of [undefined, '', 'forged', other.csrf]) {
      const fields: Record<string, string> = { operator_notes: 'nope' };
      if (token !== undefined) fields._csrf = token;
      const res = await postForm(t, `/operator/tasks/${id}/reject`, fields, cookie);
      expect(res.status, String(token)).toBe(403);
      expect(await res.text()).toContain('This form has expired');
    }
    expect(((await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json).status).toBe('submitted');
    const good = await postForm(t, `/operator/tasks/${id}/reject`, { _csrf: csrf, operator_notes: 'Out of scope.' }, cookie);
    expect(good.status).toBe(303);
    // Without any session a POST goes to sign-in, not through.
    const anon = await postForm(t, `/operator/tasks/${await submit(t)}/accept`, { _csrf: csrf });
    expect(anon.status).toBe(303);
    expect(anon.headers.get('location')).toMatch(/^\/operator\/login/);
  });

  it('keeps the JSON API answering 415 to form bodies', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'task_type=data_collection&description=hello+there+world',
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as Json).error).toBe('unsupported_media_type');
  });

  it('only redirects back inside the console after sign-in', async () => {
    for (const next of [
      '//evil.example-attacker.dev/operator',
      'https://evil.example-attacker.dev/',
      '/operatorx',
      '/api/v1/admin/tasks',
      '/operator\\@evil',
    ]) {
      const res = await postForm(t, '/operator/login', { key: TEST_ADMIN_KEY, next });
      expect(res.headers.get('location'), next).toBe('/operator');
    }
    const inside = await postForm(t, '/operator/login', { key: TEST_ADMIN_KEY, next: '/operator/tasks/task-2030-00000000000000000000000000000000' });
    expect(inside.headers.get('location')).toBe('/operator/tasks/task-2030-00000000000000000000000000000000');
  });

  it('never shows the contact e-mail outside the console', async () => {
    const id = await taskIn(t, 'delivered');
    const status = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(status).not.toContain('agent@mail.example-agent.dev');
    const { cookie } = await signIn(t);
    expect(await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text()).toContain('agent@mail.example-agent.dev');
  });
});
