import { describe, expect, it } from 'vitest';
import { STORES, useTestApp } from './support/app.js';
import { api, json } from './team.support.js';

/**
 * An invite link's token registers a passkey: it is a credential and never reaches the request
 * log at the default level (issue 49, item 8), whichever of its URLs was asked for and however the
 * path was spelled.
 */
describe.each(STORES)('invite tokens in the request log on %s', (store) => {
  const lines: string[] = [];
  // LOG_LEVEL as the service's default (info), which logs every request's URL.
  const t = useTestApp({ store, env: { LOG_LEVEL: 'info' }, logTo: { write: (line: string) => void lines.push(line) } });

  it('logs every invite URL with the token redacted', async () => {
    const created = await json(
      await api(t, 'POST', '/api/v1/admin/operators', { name: 'Log', email: `log-${Date.now()}@team.example.org`, role: 'operator' }),
      201,
    );
    const token = (created.invite_url as string).split('/').at(-1) ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const post = (path: string) => fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

    expect((await fetch(`${t.url}/operator/invite/${token}`)).status).toBe(200);
    await post(`/operator/invite/${token}/options`);
    await post(`/operator/invite/${token}/register`);
    await fetch(`${t.url}/operator/invite/${token}?x=1`);
    await fetch(`${t.url}/operator/%69nvite/${token}`);
    await fetch(`${t.url}/operator%2Finvite%2F${token}`);
    await fetch(`${t.url}//operator/invite/${token}/`);

    const logged = lines.join('');
    expect(logged).not.toContain(token);
    const urls = lines.map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url).filter((url) => url?.includes('nvite'));
    expect(urls).toEqual(
      expect.arrayContaining([
        '/operator/invite/[redacted]',
        '/operator/invite/[redacted]/options',
        '/operator/invite/[redacted]/register',
        '/operator/invite/[redacted]?x=1',
      ]),
    );
    expect(urls.length).toBeGreaterThanOrEqual(7);
  });
});
