import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';
import { newOperator } from './team.support.js';

/**
 * Login CSRF (issue 49, item 7): a page elsewhere posting the key sign-in form would sign the
 * visitor's browser in to the attacker's account. The sign-in accepts the console's own Origin,
 * or a request from no browser at all (no Origin, no Sec-Fetch-Site).
 */
describe.each(STORES)('console key sign-in against cross-site posts on %s', (store) => {
  const t = useTestApp({ store });
  const browser = useBrowser();

  const login = (key: string, headers: Record<string, string>) =>
    fetch(`${t.url}/operator/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ key, next: '/operator' }).toString(),
      redirect: 'manual',
    });

  it('refuses a cross-site Origin, Origin null and a cross-site Sec-Fetch-Site, even with a right key', async () => {
    const op = await newOperator(t);
    const refused: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: t.url, 'sec-fetch-site': 'cross-site' },
      { origin: 'not a url' },
      { origin: 'http://127.0.0.1:1' },
    ];
    for (const headers of refused) {
      for (const key of [op.key, TEST_ADMIN_KEY]) {
        const res = await login(key, headers);
        expect(res.status, JSON.stringify(headers)).toBe(403);
        expect(res.headers.get('set-cookie')).toBeNull();
        expect(await res.text()).toContain('Sign in from the console’s own sign-in page.');
      }
    }
  });

  it('signs in from the console itself (its own origin, or BASE_URL’s) and from no browser at all', async () => {
    const op = await newOperator(t);
    // The console's own pages send Origin null (their Referrer-Policy is no-referrer) with Sec-Fetch-Site same-origin.
    const accepted: Record<string, string>[] = [
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
      { origin: t.url, 'sec-fetch-site': 'same-origin' },
      { origin: t.url },
      { origin: new URL(t.config.baseUrl).origin },
      {},
    ];
    for (const headers of accepted) {
      const res = await login(op.key, headers);
      expect(res.status, JSON.stringify(headers)).toBe(303);
      expect(res.headers.get('set-cookie')).toMatch(/^hts_operator=/);
    }
  });

  describe('in a browser', () => {
    let attacker: Server;
    let attackerUrl = '';
    beforeAll(async () => {
      // The attacker's page, on another origin: a form that posts their own key to the console.
      attacker = createServer((_request, response) => {
        response.setHeader('content-type', 'text/html; charset=utf-8');
        response.end(
          `<!doctype html><form id="f" method="post" action="${t.url}/operator/login"><input name="key" value="${TEST_ADMIN_KEY}"><input name="next" value="/operator"></form><script>document.getElementById('f').submit()</script>`,
        );
      });
      await new Promise<void>((resolve) => attacker.listen(0, 'localhost', resolve));
      attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
    });
    afterAll(async () => new Promise<void>((resolve) => attacker.close(() => resolve())));

    it('a page elsewhere cannot sign the visitor in; the console’s own form still does', async () => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        const answered = page.waitForResponse((response) => response.url() === `${t.url}/operator/login`);
        await page.goto(attackerUrl);
        expect((await answered).status()).toBe(403);
        expect(await context.cookies(`${t.url}/operator`)).toEqual([]);
        await page.goto(`${t.url}/operator`);
        expect(new URL(page.url()).pathname).toBe('/operator/login');

        await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/operator`);
        expect((await context.cookies(`${t.url}/operator`)).map((cookie) => cookie.name)).toEqual(['hts_operator']);
      } finally {
        await context.close();
      }
    });
  });
});
