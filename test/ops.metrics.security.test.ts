import { describe, expect, it } from 'vitest';
import { adminGet, submit } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';

describe.each(STORES)('GET /metrics security on %s', (store) => {
  const t = useTestApp({ store });

  it('needs the operator key: 401 unauthorized like the admin API, without WWW-Authenticate', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-key-0123456789' }, { authorization: 'Basic abc' }];
    for (const headers of attempts) {
      const res = await adminGet(t, '/metrics', headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBeNull();
      const body = (await res.json()) as { error: string };
      expect(body.error).toBe('unauthorized');
    }
  });

  it('never puts a task id, a raw path or a query in a label', async () => {
    const ids = [await submit(t), await submit(t)];
    for (const id of ids) {
      await fetch(`${t.url}/api/v1/tasks/${id}`);
      await fetch(`${t.url}/tasks?id=${id}`);
      await fetch(`${t.url}/api/v1/tasks/${id}/nothing-here`);
      await fetch(`${t.url}/${id}`);
    }
    const body = await (await adminGet(t, '/metrics')).text();
    for (const id of ids) expect(body).not.toContain(id);
    expect(body).not.toContain('nothing-here');
    expect(body).not.toContain('?id=');
    // Every route label is a registered template or <unmatched>.
    const routes = new Set([...body.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
    expect(routes.has('/tasks')).toBe(true);
    expect(routes.has('<unmatched>')).toBe(true);
    for (const route of routes) expect(route === '<unmatched>' || route?.startsWith('/')).toBe(true);
  });
});
