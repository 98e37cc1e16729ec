import { describe, expect, it } from 'vitest';
import type { RouteEntry } from '../src/http/route-table.js';
import { signIn } from './console.support.js';
import { ADMIN } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';
import { newOperator } from './team.support.js';

/**
 * Roles in one place (contract "A team of operators"): every admin route and console action
 * declares the role it needs, and the route table is walked to prove it, so a new route without a
 * role fails here instead of being open to every operator or to nobody.
 */

/** Console pages anyone may fetch: sign-in (key or passkey), assets, the installable app's files, invites. */
const PUBLIC_CONSOLE = /^\/operator\/(login|assets\/.*|manifest\.webmanifest|sw\.js|invite\/:token(\/options|\/register)?|passkey\/(options|signin))$/;

function needsRole(route: RouteEntry): boolean {
  if (route.method === 'HEAD' || route.method === 'OPTIONS') return false;
  if (route.url.startsWith('/api/v1/admin/') || route.url === '/metrics') return true;
  if (route.method === 'PATCH' && route.url === '/api/v1/tasks/:task_id') return true;
  return route.url.startsWith('/operator') && !PUBLIC_CONSOLE.test(route.url);
}

/** A concrete path for a route's pattern: every parameter filled with a value no record has. */
function pathOf(url: string): string {
  return url.replace(/:[a-z_]+/g, 'x-none');
}

describe.each(STORES)('roles on %s', (store) => {
  const t = useTestApp({ store });
  const guarded = () => t.app.routeTable.filter(needsRole);

  it('declares a role on every admin route and console action', () => {
    const routes = guarded();
    // The walk must see the known routes at all (a broken table would pass vacuously).
    expect(routes.length).toBeGreaterThan(25);
    const missing = routes.filter((route) => route.role === undefined).map((route) => `${route.method} ${route.url}`);
    expect(missing).toEqual([]);
  });

  it('refuses every role-guarded API route without a key (401), and lets the owner key through', async () => {
    for (const route of guarded().filter((r) => !r.url.startsWith('/operator'))) {
      const init = { method: route.method, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: '{}' }) };
      const anonymous = await fetch(`${t.url}${pathOf(route.url)}`, { ...init, headers: { 'content-type': 'application/json' } });
      expect(anonymous.status, `${route.method} ${route.url}`).toBe(401);
      const owner = await fetch(`${t.url}${pathOf(route.url)}`, { ...init, headers: { ...ADMIN, 'content-type': 'application/json' } });
      expect([401, 403], `${route.method} ${route.url}`).not.toContain(owner.status);
    }
  });

  it('sends every role-guarded console page to the sign-in without a session, and lets the owner in', async () => {
    const { cookie, csrf } = await signIn(t);
    // Sign-out last: it ends the session the others use.
    const routes = guarded()
      .filter((r) => r.url.startsWith('/operator'))
      .sort((a, b) => Number(a.url === '/operator/logout') - Number(b.url === '/operator/logout'));
    for (const route of routes) {
      const post = route.method === 'POST';
      const init = {
        method: route.method,
        redirect: 'manual' as const,
        ...(post ? { body: new URLSearchParams({ _csrf: csrf }).toString() } : {}),
      };
      const form: Record<string, string> = post ? { 'content-type': 'application/x-www-form-urlencoded' } : {};
      const anonymous = await fetch(`${t.url}${pathOf(route.url)}`, { ...init, headers: form });
      // The file upload is the script's XHR: it is refused in JSON rather than redirected.
      if (anonymous.status !== 401) {
        expect(anonymous.status, `${route.method} ${route.url}`).toBe(303);
        expect(anonymous.headers.get('location') ?? '', `${route.method} ${route.url}`).toMatch(/^\/operator\/login/);
      }
      if (route.url === '/operator/events') continue; // an endless stream; live.security covers it
      const owner = await fetch(`${t.url}${pathOf(route.url)}`, { ...init, headers: { ...form, cookie, 'x-csrf-token': csrf } });
      expect([401, 403], `${route.method} ${route.url}`).not.toContain(owner.status);
      await owner.body?.cancel();
    }
  });

  it('refuses an operator every admin-role route (403 forbidden) and lets them use the operator-role ones', async () => {
    const op = await newOperator(t);
    for (const route of guarded().filter((r) => !r.url.startsWith('/operator'))) {
      const init = { method: route.method, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: '{}' }) };
      const res = await fetch(`${t.url}${pathOf(route.url)}`, { ...init, headers: { ...op.auth, 'content-type': 'application/json' } });
      const body = (await res.json().catch(() => ({}))) as { error?: string };
      if (route.role === 'admin') {
        expect(res.status, `${route.method} ${route.url}`).toBe(403);
        expect(body.error, `${route.method} ${route.url}`).toBe('forbidden');
      } else {
        expect(res.status, `${route.method} ${route.url}`).not.toBe(401);
        // Another operator's keys are refused by the service, not by the role.
        if (!route.url.includes(':operator_id')) expect(body.error, `${route.method} ${route.url}`).not.toBe('forbidden');
      }
    }
  });

  it('answers an operator’s session on every admin-role console page with the 403 page', async () => {
    const op = await newOperator(t);
    const { cookie, csrf } = await signIn(t, op.key);
    for (const route of guarded().filter((r) => r.url.startsWith('/operator') && r.role === 'admin')) {
      const post = route.method === 'POST';
      const res = await fetch(`${t.url}${pathOf(route.url)}`, {
        method: route.method,
        redirect: 'manual',
        headers: { cookie, ...(post ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(post ? { body: new URLSearchParams({ _csrf: csrf }).toString() } : {}),
      });
      expect(res.status, `${route.method} ${route.url}`).toBe(403);
      expect(res.headers.get('content-type'), `${route.method} ${route.url}`).toMatch(/^text\/html/);
      expect(await res.text()).toContain('needs the admin role');
    }
  });
});
