import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations, consoleContext, sideways } from './inbox.support.js';
import { patchOk, submit } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';

/**
 * The 10 s undo hold in a browser (issue 51, item 7): after Accept or Deliver the task page shows
 * the change in progress ("Accepting…", "Delivering…") with its Undo, not the old status and the
 * buttons the action replaced; the banner says when it commits ("in 10 s"), never "just now".
 * Undo brings the actions back. Layout does not depend on the store: the first one is enough.
 */
describe.each(STORES.slice(0, 1))('a held console action in Chromium, on %s', (store) => {
  const t = useTestApp({ store, clock: new TestClock(new Date()), env: { CONSOLE_UNDO_SECONDS: '10' } });
  const browser = useBrowser();

  async function held(page: Page) {
    return page.evaluate(() => ({
      pill: document.querySelector('.page-head .pill')?.textContent?.trim(),
      banner: document.querySelector('.flash.held')?.textContent?.replace(/\s+/g, ' ').trim() ?? '',
      buttons: Array.from(document.querySelectorAll('button'))
        .filter((b) => b.offsetParent !== null)
        .map((b) => b.textContent?.trim()),
      bar: document.querySelector('.action-bar') !== null,
    }));
  }

  it('Accept, then Deliver: the page shows "Accepting…"/"Delivering…" with Undo, without the actions it replaced', async () => {
    const id = await submit(t, { description: 'Check whether the bakery on Main Street opens on Sunday.' });
    const ctx = await consoleContext(browser, t, true);
    const page = await ctx.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${t.url}/operator/tasks/${id}`);
    await page.getByRole('button', { name: 'Accept task' }).click();
    await page.waitForSelector('.flash.held');
    let shown = await held(page);
    expect(shown.pill).toBe('Accepting…');
    expect(shown.banner).toContain('Accepting…');
    expect(shown.banner).toContain('(in 10 s)');
    expect(shown.banner).not.toContain('just now');
    expect(shown.buttons).toContain('Undo');
    expect(shown.buttons).not.toContain('Accept task');
    expect(shown.buttons).not.toContain('Reject task');
    expect(shown.bar).toBe(false);
    expect(await axeViolations(page)).toEqual([]);
    expect(await sideways(page)).toBe(false);

    // Undo: the review is back, the task untouched.
    await page.getByRole('button', { name: 'Undo' }).click();
    await page.waitForSelector('text=Undone. Nothing was sent to the requester.');
    shown = await held(page);
    expect(shown.pill).toBe('submitted');
    expect(shown.buttons).toContain('Accept task');

    // Deliver on an accepted task: "Delivering…", the deliver form and the ETA card gone.
    await patchOk(t, id, { status: 'accepted' });
    await page.goto(`${t.url}/operator/tasks/${id}`);
    await page.locator('#notes').fill('Open on Sunday from 8:00 to 12:00.');
    await page.getByRole('button', { name: 'Deliver & sign receipt' }).click();
    await page.waitForSelector('.flash.held');
    shown = await held(page);
    expect(shown.pill).toBe('Delivering…');
    expect(shown.banner).toContain('(in 10 s)');
    expect(shown.buttons).toContain('Undo');
    expect(shown.buttons).not.toContain('Deliver & sign receipt');
    expect(shown.buttons).not.toContain('Update ETA');
    expect(shown.buttons).not.toContain('Reject task');
    expect(shown.bar).toBe(false);
    expect(await axeViolations(page)).toEqual([]);
    await ctx.close();
  }, 60_000);
});
