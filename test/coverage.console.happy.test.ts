import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { patchOk, submit } from './operator.support.js';
import { startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock } from './support/app.js';
import { seriousAxeViolations } from './support/axe.js';
import { launchBrowser } from './support/browser.js';

/**
 * The operators see their own service level on the queue's "More" sheet (docs/coverage.md): the
 * same figures as GET /api/v1/coverage, readable on a phone (390×844: no sideways scroll, no
 * serious axe violation with the sheet open).
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
});
