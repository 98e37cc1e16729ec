import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submit } from './operator.support.js';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock } from './support/app.js';
import { launchBrowser } from './support/browser.js';

describe.each(STORES)('the live console on %s', (store) => {
  let a: TestApp;
  let b: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    const clock = new TestClock(new Date());
    a = await startTestApp({ store, clock });
    // On PostgreSQL a second instance on the same database: its changes reach a's consoles by LISTEN/NOTIFY.
    b = store === 'postgres' ? await startTestApp({ store, clock, shareDatabaseWith: a }) : a;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    if (b !== a) await b?.close();
    await a?.close();
  });

  async function console(phone: boolean): Promise<Page> {
    const context = await browser.newContext(
      phone ? { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } : { viewport: { width: 1280, height: 900 } },
    );
    const page = await context.newPage();
    await page.goto(`${a.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${a.url}/operator`);
    return page;
  }

  for (const phone of [false, true]) {
    it(`${phone ? 'phone' : 'desktop'}: a new task appears within 5 s without reload, highlighted, and the title count changes`, async () => {
      const page = await console(phone);
      const before = await page.title();
      const unseenBefore = Number(/^\((\d+)\)/.exec(before)?.[1] ?? 0);
      await page.waitForFunction(() => document.querySelector('[data-live-list]') !== null);
      // Let the event stream connect before the change happens.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const id = await submit(b, { description: `Live queue check ${Math.random()}: is the bakery on Main Street open on Sunday?` });
      const started = Date.now();
      await page.locator(`li.fresh[data-task-id="${id}"]`).waitFor({ state: 'visible', timeout: 5_000 });
      expect(Date.now() - started).toBeLessThan(5_000);
      await expect.poll(() => page.title(), { timeout: 5_000 }).toBe(`(${unseenBefore + 1}) Queue · Operator desk`);
      // A message counts too.
      await postJson(`${b.url}/api/v1/messages`, { message: `A question about ${id}, please.`, reply_to: 'asker@mail.example-agent.dev' });
      await expect.poll(() => page.title(), { timeout: 5_000 }).toBe(`(${unseenBefore + 2}) Queue · Operator desk`);
      await page.context().close();
    }, 60_000);
  }

  it('an open task page shows a new message about its task without reload, keeping what the operator typed', async () => {
    const page = await console(true);
    const id = await submit(b);
    await page.goto(`${a.url}/operator/tasks/${id}`);
    await page.locator('#reason').fill('Half-typed reason');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await postJson(`${b.url}/api/v1/messages`, { message: `Is ${id} still on for Sunday?`, reply_to: 'asker@mail.example-agent.dev' });
    await page.getByText('still on for Sunday?').waitFor({ state: 'visible', timeout: 5_000 });
    expect(await page.locator('#reason').inputValue()).toBe('Half-typed reason');
    await page.context().close();
  }, 60_000);

  it('the event stream needs the session cookie', async () => {
    const res = await fetch(`${a.url}/operator/events`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toContain('/operator/login');
  });

  it('without JavaScript the queue still works with a reload, the title carries the count', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${a.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const id = await submit(b);
    await page.reload();
    expect(await page.locator(`li[data-task-id="${id}"]`).count()).toBe(1);
    expect(await page.title()).toMatch(/^\(\d+\) Queue · Operator desk$/);
    await context.close();
  });
});
