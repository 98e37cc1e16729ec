import { TEST_ADMIN_KEY, type TestApp } from './support/app.js';

/** Signs in to the console over plain HTTP; returns the session cookie and the page's CSRF token. */
export async function signIn(t: TestApp, key = TEST_ADMIN_KEY): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${t.url}/operator/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key, next: '/operator' }).toString(),
    redirect: 'manual',
  });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const page = await (await fetch(`${t.url}/operator`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!csrf) throw new Error('no CSRF token on the queue page');
  return { cookie, csrf };
}

export function postForm(t: TestApp, path: string, fields: Record<string, string>, cookie?: string): Promise<Response> {
  return fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}
