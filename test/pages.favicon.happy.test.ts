import type { ConsoleMessage, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { consoleContext } from './inbox.support.js';
import { submit } from './operator.support.js';
import { TestClock, useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';

/**
 * Issue 51, item 11: `/favicon.ico` was a 404 on every page, an error in the browser's console.
 * Now every page names `/favicon.svg`, `/favicon.ico` answers an icon Chromium itself decodes, and
 * a walk over the public pages and the console leaves no console error and no failed request.
 */
describe('the icon, in Chromium', () => {
  const t = useTestApp({ store: 'sqlite', clock: new TestClock(new Date()) });
  const browser = useBrowser();

  /** Every console error and every answer of 400 or more while the page loads (the icon included). */
  function watch(page: Page): string[] {
    const problems: string[] = [];
    page.on('console', (message: ConsoleMessage) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    return problems;
  }

  it('/favicon.ico and /favicon.svg are icons Chromium decodes, cached, outside the API document', async () => {
    const ico = await fetch(`${t.url}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get('content-type')).toBe('image/x-icon');
    expect(ico.headers.get('cache-control')).toContain('max-age=');
    expect([...new Uint8Array(await ico.arrayBuffer()).slice(0, 4)]).toEqual([0, 0, 1, 0]);
    const svg = await fetch(`${t.url}/favicon.svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    const openapi = (await (await fetch(`${t.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths).filter((p) => p.includes('favicon'))).toEqual([]);

    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`${t.url}/`);
    const sizes = await page.evaluate(async () => {
      const load = (src: string) =>
        new Promise<number>((resolve) => {
          const img = new Image();
          img.onload = () => resolve(img.naturalWidth);
          img.onerror = () => resolve(-1);
          img.src = src;
        });
      return [await load('/favicon.ico'), await load('/favicon.svg')];
    });
    expect(sizes).toEqual([32, 512]);
    await ctx.close();
  });

  it('the public pages and the console load without a console error or a failed request', async () => {
    const id = await submit(t, { description: 'Check the opening hours of the bakery on Main Street.' });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const problems = watch(page);
    for (const path of ['/', `/tasks?id=${id}`, '/docs', '/operator/login', '/openapi.json']) {
      await page.goto(`${t.url}${path}`, { waitUntil: 'networkidle' });
      expect(problems, path).toEqual([]);
    }
    expect(await page.goto(`${t.url}/`).then(() => page.locator('link[rel=icon]').getAttribute('href'))).toBe('/favicon.svg');
    await ctx.close();

    const signedIn = await consoleContext(browser, t, true);
    const consolePage = await signedIn.newPage();
    const consoleProblems = watch(consolePage);
    for (const path of ['/operator', `/operator/tasks/${id}`]) {
      await consolePage.goto(`${t.url}${path}`, { waitUntil: 'networkidle' });
      expect(consoleProblems, path).toEqual([]);
    }
    expect(await consolePage.locator('link[rel=icon]').getAttribute('href')).toBe('/favicon.svg');
    await signedIn.close();
  }, 60_000);
});
