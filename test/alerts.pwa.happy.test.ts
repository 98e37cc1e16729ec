import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_ADMIN_KEY, type TestApp } from './support/app.js';
import { launchBrowser } from './support/browser.js';

// The browser side of the installable console: one store is enough (nothing here touches it).
describe('the console as an installable app, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('registers its service worker for the whole console and offers to enable notifications', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${t.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${t.url}/operator`);
    await page.getByRole('button', { name: 'Enable notifications' }).waitFor({ state: 'visible', timeout: 5_000 });
    // Registering with scope /operator (above the worker's own folder) needs Service-Worker-Allowed.
    const scope = await page.evaluate(async () => (await navigator.serviceWorker.register('/operator/sw.js', { scope: '/operator' })).scope);
    expect(scope).toBe(`${t.url}/operator`);
    const manifest = await page.evaluate(async () => {
      const link = document.querySelector('link[rel="manifest"]') as HTMLLinkElement;
      return (await fetch(link.href)).json() as Promise<{ start_url: string }>;
    });
    expect(manifest.start_url).toBe('/operator');
    await context.close();
  });
});
