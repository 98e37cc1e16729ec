import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submit } from './operator.support.js';
import { STORES, startTestApp, type TestApp, TestClock } from './support/app.js';
import { launchBrowser } from './support/browser.js';
import { newOperator, type TestOperator } from './team.support.js';

/**
 * Assignment seen by two operators at once (issue 26): Grace and Linus each have the queue open in
 * a browser of their own (on PostgreSQL, each on another instance of the service); Grace takes a
 * task, and Linus's open queue shows it taken and its counts move, without a reload.
 */
describe.each(STORES)('two operators on the live queue on %s', (store) => {
  let a: TestApp;
  let b: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    const clock = new TestClock(new Date());
    a = await startTestApp({ store, clock });
    b = store === 'postgres' ? await startTestApp({ store, clock, shareDatabaseWith: a }) : a;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    if (b !== a) await b?.close();
    await a?.close();
  });

  async function signedIn(app: TestApp, op: TestOperator, path: string, options: BrowserContextOptions): Promise<Page> {
    const page = await (await browser.newContext(options)).newPage();
    await page.goto(`${app.url}/operator/login`);
    await page.getByLabel('Operator key').fill(op.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${app.url}/operator`);
    await page.goto(`${app.url}${path}`);
    return page;
  }

  const count = (page: Page, view: string) => page.locator(`nav[aria-label="Assignment"] a[href="/operator?view=${view}"] .count`).textContent();

  it('Grace takes a task; Linus’s open queue shows it taken and the Unassigned count drop, without a reload', async () => {
    const grace = await newOperator(a, 'operator', 'Grace');
    const linus = await newOperator(a, 'operator', 'Linus');
    const id = await submit(a, { description: `Two operators check ${Math.random()}: is the bakery on Main Street open on Sunday?` });

    const linusAll = await signedIn(b, linus, '/operator', { viewport: { width: 1366, height: 900 } });
    const linusUnassigned = await signedIn(b, linus, '/operator?view=unassigned', { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const gracePage = await signedIn(a, grace, `/operator/tasks/${id}`, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await linusUnassigned.locator(`li[data-task-id="${id}"]`).waitFor({ state: 'visible' });
    const unassignedBefore = Number(await count(linusUnassigned, 'unassigned'));
    expect(unassignedBefore).toBeGreaterThan(0);
    expect(await count(linusAll, 'mine')).toBe('0');
    expect(await linusAll.locator(`li[data-task-id="${id}"] [data-assignee]`).count()).toBe(0);
    // Marks that a reload would erase; and time for the event streams to connect.
    for (const page of [linusAll, linusUnassigned]) await page.evaluate(() => Object.assign(window, { notReloaded: true }));
    await new Promise((resolve) => setTimeout(resolve, 700));

    await gracePage.getByRole('button', { name: 'Take it' }).click();
    await gracePage.getByText('Assigned to Grace (you).').waitFor({ state: 'visible' });

    // Linus's "All" view: the task is marked as Grace's; the Unassigned count dropped by one.
    await linusAll.locator(`li[data-task-id="${id}"] [data-assignee="${grace.operator_id}"]`).waitFor({ state: 'visible', timeout: 5_000 });
    expect(await linusAll.locator(`li[data-task-id="${id}"] [data-assignee]`).textContent()).toBe('Assigned to Grace');
    await expect.poll(() => count(linusAll, 'unassigned'), { timeout: 5_000 }).toBe(String(unassignedBefore - 1));
    expect(await count(linusAll, 'mine')).toBe('0');
    // Linus's "Unassigned" view (a phone): the task left the list.
    await linusUnassigned.locator(`li[data-task-id="${id}"]`).waitFor({ state: 'detached', timeout: 5_000 });
    await expect.poll(() => count(linusUnassigned, 'unassigned'), { timeout: 5_000 }).toBe(String(unassignedBefore - 1));
    for (const page of [linusAll, linusUnassigned]) expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    if (store === 'sqlite') {
      await linusAll.screenshot({ path: '/tmp/i26b-linus-all-1366.png', fullPage: false });
      await linusUnassigned.screenshot({ path: '/tmp/i26b-linus-unassigned-390.png', fullPage: false });
    }

    // Grace's own queue: the task is hers, under Mine.
    await gracePage.goto(`${a.url}/operator?view=mine`);
    expect(await count(gracePage, 'mine')).toBe('1');
    expect(await gracePage.locator(`li[data-task-id="${id}"] [data-assignee]`).textContent()).toBe('Yours');
    if (store === 'sqlite') await gracePage.screenshot({ path: '/tmp/i26b-grace-mine-390.png', fullPage: false });
    for (const page of [linusAll, linusUnassigned, gracePage]) await page.context().close();
  }, 60_000);
});
