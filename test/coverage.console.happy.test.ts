import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { patchOk, submit } from './operator.support.js';
import { startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock } from './support/app.js';
import { seriousAxeViolations } from './support/axe.js';
import { launchBrowser } from './support/browser.js';

/**
 * The operators see their own service level on the queue's "More" sheet on a phone and beside the
 * queue on a wide screen (docs/coverage.md): the same figures as GET /api/v1/coverage, readable
 * (390×844: no sideways scroll; no serious axe violation either way), loaded from its own page
 * once in view, so the queue page itself never reads coverage.
 */
describe('service level on the console', () => {
  let t: TestApp;
  let browser: Browser;
  const clock = new TestClock('2030-03-10T10:00:00.000Z');

  beforeAll(async () => {
    t = await startTestApp({ clock });
    browser = await launchBrowser();
    // Six data_collection tasks accepted 30 minutes and delivered 2 hours after submission.
    for (let i = 0; i < 6; i++) {
      const id = await submit(t, { task_type: 'data_collection', description: `Count the parked bicycles at the station, round ${i}.` });
      clock.advance(30 * 60_000);
      await patchOk(t, id, { status: 'accepted' });
      clock.advance(90 * 60_000);
      await patchOk(t, id, { status: 'delivered', operator_notes: 'Forty-two bicycles.' });
      clock.set('2030-03-10T10:00:00.000Z');
    }
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('phone 390×844: the More sheet shows the same figures as the coverage endpoint', async () => {
    const coverage = (await (await fetch(`${t.url}/api/v1/coverage`)).json()) as { by_type: { task_type: string; delivered_30d: number }[] };
    expect(coverage.by_type.find((b) => b.task_type === 'data_collection')?.delivered_30d).toBe(6);
    const ctx = await browser.newContext({ bypassCSP: true, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await ctx.newPage();
    await page.goto(`${t.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${t.url}/operator`);
    await page.locator('details.more > summary').click();
    const sheet = page.locator('.more-menu .service-level');
    await expect.poll(() => sheet.isVisible()).toBe(true);
    const text = (await sheet.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain('Service level, last 30 days');
    expect(text).toContain('Data collection');
    expect(text).toContain('accepted 30 min');
    expect(text).toContain('delivered 2.0 h');
    expect(text).toContain('100 % taken · 6 delivered');
    await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? '/tmp'}/coverage-more-sheet-390.png` });
    const box = await sheet.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await ctx.close();
  }, 60_000);

  it('desktop 1280×800: the figures beside the queue, with ids of their own', async () => {
    const ctx = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await page.goto(`${t.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${t.url}/operator`);
    const aside = page.locator('[data-service-level="aside"] .service-level');
    await expect.poll(() => aside.isVisible()).toBe(true);
    const text = (await aside.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain('Data collection');
    expect(text).toContain('delivered 2.0 h');
    expect(text).toContain('100 % taken · 6 delivered');
    expect(await aside.getAttribute('aria-labelledby')).toBe('service-level-aside-title');
    expect(await page.locator('#service-level-aside-title').innerText()).toBe('Service level, last 30 days');
    // The phone's sheet is not filled on a wide screen.
    expect(await page.locator('[data-service-level="sheet"] .service-level').count()).toBe(0);
    await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? '/tmp'}/coverage-desktop-1280.png` });
    expect(await seriousAxeViolations(page)).toEqual([]);
    await ctx.close();
  }, 60_000);

  it('the queue page holds only links to the service level; its own page shows the figures without the script', async () => {
    const login = await fetch(`${t.url}/operator/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: TEST_ADMIN_KEY, next: '/operator' }).toString(),
      redirect: 'manual',
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const queue = await (await fetch(`${t.url}/operator`, { headers: { cookie } })).text();
    expect(queue).toContain('data-service-level="sheet"');
    expect(queue).toContain('data-service-level="aside"');
    expect(queue).not.toContain('class="service-level"');
    expect(queue).not.toContain('6 delivered');
    const own = await fetch(`${t.url}/operator/service-level`, { headers: { cookie } });
    expect(own.status).toBe(200);
    const text = (await own.text()).replace(/\s+/g, ' ');
    expect(text).toContain('<h1>Service level</h1>');
    expect(text).toContain('100 % taken · 6 delivered');
    const signedOut = await fetch(`${t.url}/operator/service-level`, { redirect: 'manual' });
    expect(signedOut.status).toBe(303);
  });
});
