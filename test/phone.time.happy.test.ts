import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminGet, type Json, submit } from './operator.support.js';
import { STORES, startTestApp, type TestApp, TestClock } from './support/app.js';
import { launchBrowser } from './support/browser.js';

describe.each(STORES)('times in the reader’s own zone on %s', (store) => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestApp({ store, clock: new TestClock(new Date()) });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('the status page shows local time with a relative time and keeps UTC on hover; without script, UTC', async () => {
    const deadline = new Date(Date.now() + 3 * 86_400_000);
    deadline.setUTCHours(15, 0, 0, 0);
    const id = await submit(t, { deadline: deadline.toISOString() });
    const context = await browser.newContext({ timezoneId: 'Asia/Tokyo', locale: 'en-GB' });
    const page = await context.newPage();
    await page.goto(`${t.url}/tasks?id=${id}`);
    const row = page.locator('dt:has-text("Deadline") + dd time');
    await expect.poll(async () => row.textContent(), { timeout: 10_000 }).toMatch(/00:00 \(in \d days?\)$/);
    expect(await row.getAttribute('title')).toMatch(/15:00 UTC$/);
    expect(await row.getAttribute('datetime')).toBe(deadline.toISOString());
    await context.close();
    const plain = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(plain).toMatch(/data-local>\d+ \w+ \d{4}, 15:00 UTC<\/time>/);
  });

  it('the web form takes the deadline in local time and stores it with its offset', async () => {
    const context = await browser.newContext({ timezoneId: 'America/New_York', viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${t.url}/`);
    expect(await page.locator('label[for="f-deadline"]').textContent()).toContain('America/New_York');
    await page.locator('#f-task_type').selectOption({ index: 1 });
    await page.locator('#f-description').fill('Check whether the bakery at 12 Main Street opens on Sunday mornings, with a photo of the sign.');
    await page.locator('#f-deadline').fill('2031-01-15T09:30');
    await page.locator('input[name="delivery"][value="status_poll"]').check();
    await page.getByRole('button', { name: 'Submit for human review' }).click();
    await page.waitForURL(/\/tasks\?id=/);
    const id = new URL(page.url()).searchParams.get('id') ?? '';
    const task = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    expect(task.deadline).toBe('2031-01-15T09:30:00-05:00');
    await context.close();
  });
});
