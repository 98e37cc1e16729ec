import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { adminGet, type Json, submit, taskIn } from './operator.support.js';
import { STORES, TEST_ADMIN_KEY, TestClock, useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';

/**
 * Issue 31: a keyboard-only triage of five tasks in Chromium with the console's shortcuts (j/k
 * move, o open, a accept, r ask or reply, d deliver, x reject, / search, ? help, g back to the
 * queue, Ctrl+Enter sends the form being typed in). The mouse is never used.
 */

describe.each(STORES)('keyboard shortcuts in the console on %s', (store) => {
  const clock = new TestClock(new Date());
  const t = useTestApp({ store, clock });
  const browser = useBrowser();

  async function openNth(page: Page, n: number): Promise<string> {
    await page.goto(`${t.url}/operator?status=submitted&order=oldest`);
    for (let i = 0; i < n; i++) await page.keyboard.press('j');
    await page.keyboard.press('o');
    await page.waitForURL(/\/operator\/tasks\//);
    return page.url().split('/').pop() ?? '';
  }

  it('triages five tasks from the keyboard alone: accept, ask, reject, accept and deliver, reject', async () => {
    const ids: string[] = [];
    for (const what of ['the bakery hours', 'the museum sign', 'the parking spaces', 'the florist prices', 'the bus timetable']) {
      ids.push(await submit(t, { description: `Please check ${what} in Springfield and report back.` }));
      clock.advance(1000);
    }
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${t.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/operator(\?|$)/);

    // ? shows the shortcuts; Escape closes them; / goes to the search box.
    await page.goto(`${t.url}/operator?status=submitted&order=oldest`);
    await page.keyboard.press('?');
    await expect.poll(() => page.getByRole('dialog', { name: 'Keyboard shortcuts' }).isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog', { name: 'Keyboard shortcuts' }).count()).toBe(0);
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('q');
    await page.keyboard.press('Escape');

    // 1: accept the first (j selects it, o opens it, a accepts with the default ETA).
    expect(await openNth(page, 1)).toBe(ids[0]);
    await page.keyboard.press('a');
    await page.waitForURL(/done=accepted/);

    // 2: ask the requester a question (r, type, Ctrl+Enter).
    expect(await openNth(page, 1)).toBe(ids[1]);
    await page.keyboard.press('r');
    await page.keyboard.type('Which entrance of the museum do you mean?');
    await page.keyboard.press('Control+Enter');
    await page.waitForURL(/done=asked/);

    // 3: reject the next one with a reason (x, type, Ctrl+Enter, confirm).
    expect(await openNth(page, 2)).toBe(ids[2]);
    await page.keyboard.press('x');
    await page.keyboard.type('We cannot get there this week.');
    await page.keyboard.press('Control+Enter');
    await page.waitForURL(/done=rejected/);

    // 4: accept, then deliver (a, then d, type, Ctrl+Enter, confirm).
    expect(await openNth(page, 2)).toBe(ids[3]);
    await page.keyboard.press('a');
    await page.waitForURL(/done=accepted/);
    await page.keyboard.press('d');
    await page.keyboard.type('Roses are 4 EUR each; a bouquet of 12 is 40 EUR.');
    await page.keyboard.press('Control+Enter');
    await page.waitForURL(/done=delivered/);

    // 5: back to the queue with g, k/j to the last one, reject.
    await page.keyboard.press('g');
    await page.waitForURL(/\/operator$/);
    await page.goto(`${t.url}/operator?status=submitted&order=oldest`);
    for (const key of ['j', 'j', 'k', 'j']) await page.keyboard.press(key);
    await page.keyboard.press('o');
    await page.waitForURL(/\/operator\/tasks\//);
    expect(page.url()).toContain(ids[4]);
    await page.keyboard.press('x');
    await page.keyboard.type('Timetables are online; no visit needed.');
    await page.keyboard.press('Control+Enter');
    await page.waitForURL(/done=rejected/);
    await context.close();

    const status = async (id: string | undefined) => (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    expect((await status(ids[0])).status).toBe('accepted');
    const asked = await status(ids[1]);
    expect(asked.status).toBe('submitted');
    expect(JSON.stringify(asked.questions)).toContain('Which entrance of the museum do you mean?');
    expect(await status(ids[2])).toMatchObject({ status: 'rejected', operator_notes: 'We cannot get there this week.' });
    expect(await status(ids[3])).toMatchObject({ status: 'delivered', operator_notes: 'Roses are 4 EUR each; a bouquet of 12 is 40 EUR.' });
    expect(await status(ids[4])).toMatchObject({ status: 'rejected', operator_notes: 'Timetables are online; no visit needed.' });
  }, 90_000);

  it('with the script, "Use" puts a delivery template into the deliverable box in place, under the strict CSP', async () => {
    const { cookie, csrf } = await signIn(t);
    const body = 'Checked on site:\n- open 7:30–12:00';
    expect((await postForm(t, '/operator/templates', { _csrf: csrf, kind: 'result', name: 'Hours', body }, cookie)).status).toBe(303);
    const id = await taskIn(t, 'accepted');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${t.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/operator(\?|$)/);
    await page.goto(`${t.url}/operator/tasks/${id}`);
    await page.getByText('Templates…').click();
    await page.getByLabel('Use a delivery template').selectOption({ label: 'Hours' });
    await page.getByRole('button', { name: 'Use', exact: true }).click();
    await expect.poll(() => page.locator('#notes').inputValue()).toBe(body);
    expect(page.url()).toBe(`${t.url}/operator/tasks/${id}`);
    expect(errors).toEqual([]);
    await context.close();
  });
});
