import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, consoleContext, type Seeded, seedConsole, sideways, smallTargets } from './inbox.support.js';
import { STORES, startTestApp, type TestApp, TestClock } from './support/app.js';
import { launchBrowser } from './support/browser.js';

/**
 * Issue 31 in a browser: the queue is an inbox a phone shows at once (first card within 200 px,
 * cards at most 120 px), every console page's targets are 44×44 px at 390 px, axe finds nothing
 * serious, nothing scrolls sideways, and the operator reads words, not field names or raw times.
 * Layout does not depend on the store: the browser sweep runs on the first one.
 */
describe.each(STORES.slice(0, 1))('the console as an inbox, in Chromium, on %s', (store) => {
  let t: TestApp;
  let browser: Browser;
  let seeded: Seeded;
  let pages: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({ store, clock: new TestClock(new Date()) });
    browser = await launchBrowser();
    seeded = await seedConsole(t);
    const messages = (await (await fetch(`${t.url}/api/v1/admin/messages`, { headers: { authorization: 'Bearer test-admin-key-0123456789' } })).json()) as {
      messages: { message_id: string }[];
    };
    pages = [
      '/operator',
      ...['all', 'submitted', 'accepted', 'delivered', 'rejected'].map((status) => `/operator?status=${status}`),
      '/operator?view=unassigned',
      '/operator?status=open&test=only',
      ...[seeded.submitted, seeded.accepted, seeded.structured, seeded.answered, seeded.delivered, seeded.rejected].map((id) => `/operator/tasks/${id}`),
      '/operator/messages',
      '/operator/messages?show=all',
      `/operator/messages?reply=${messages.messages[0]?.message_id}`,
      '/operator/team',
      '/operator/approve',
      '/operator/blocklist',
      '/operator/outbox',
      '/operator/stats',
      // The console's error page.
      `/operator/tasks/task-2026-${'0'.repeat(32)}`,
    ];
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Opens every <details> of the page (menus, sheets, technical details), as a curious operator would. */
  async function openAll(page: Page): Promise<void> {
    await page.evaluate(() => {
      for (const d of Array.from(document.querySelectorAll('details'))) if (!d.closest('.more')) d.open = true;
    });
  }

  it('phone 390×844: the first item within 200 px, cards ≤ 120 px, unread counts in the nav and the title', async () => {
    const ctx = await consoleContext(browser, t, true);
    const page = await ctx.newPage();
    await page.goto(`${t.url}/operator`);
    const layout = await page.evaluate(() => ({
      first: document.querySelector('.queue > li')?.getBoundingClientRect().top ?? Number.POSITIVE_INFINITY,
      heights: Array.from(document.querySelectorAll('.queue > li')).map((li) => Math.round(li.getBoundingClientRect().height)),
      topbar: document.querySelector('.topbar')?.getBoundingClientRect().height ?? 0,
    }));
    expect(layout.first).toBeLessThanOrEqual(200);
    expect(layout.heights.length).toBeGreaterThanOrEqual(13);
    expect(Math.max(...layout.heights)).toBeLessThanOrEqual(120);
    // The navigation is one row (it took two, plus the sign-out button, before).
    expect(layout.topbar).toBeLessThanOrEqual(60);
    // 8 submitted tasks nobody opened + 4 messages nobody answered.
    expect(await page.title()).toBe('(12) Queue · Operator desk');
    expect(await page.locator('.nav a[href="/operator"] .count').getAttribute('aria-label')).toBe('8 new');
    expect(await page.locator('.nav a[href="/operator/messages"] .count').getAttribute('aria-label')).toBe('4 waiting');
    // Each card: a human title (the description's first words), the place, the time left.
    const card = page.locator(`li[data-task-id="${seeded.submitted}"]`);
    expect(await card.locator('.item-title').textContent()).toBe('Photograph the opening hours sign at the bakery on 12 Main…');
    expect(await card.locator('.item-line').textContent()).toContain('Springfield');
    expect(await card.locator('.item-when').textContent()).toMatch(/\d+ h left/);
    // The rest of the console is one tap away, in "More".
    await page.getByText('More', { exact: true }).click();
    await page.getByRole('link', { name: 'Stats' }).click();
    await page.waitForURL(`${t.url}/operator/stats`);
    // The filters are one row that opens as a sheet.
    await page.goto(`${t.url}/operator`);
    await page.getByText('Open · Due first').click();
    await page.getByRole('link', { name: /^Submitted/ }).click();
    await page.waitForURL(/status=submitted/);
    await ctx.close();
  });

  it('phone 390×844: the task page leads with the title and the request, and keeps the next step in a bar at the bottom', async () => {
    const ctx = await consoleContext(browser, t, true);
    const page = await ctx.newPage();
    for (const [id, next] of [
      [seeded.submitted, 'Accept, 1 day'],
      [seeded.accepted, 'Deliver'],
      [seeded.structured, 'Deliver'],
    ] as const) {
      await page.goto(`${t.url}/operator/tasks/${id}`);
      const bar = page.locator('.action-bar');
      const box = await bar.boundingBox();
      expect(box && box.y + box.height).toBeLessThanOrEqual(844.5);
      expect(box && box.y).toBeGreaterThan(700);
      expect(await bar.locator('.btn').first().textContent()).toBe(next);
      expect(await bar.textContent()).not.toContain('Reject');
      expect(await page.locator('h1').textContent()).not.toBe('Real world verification');
      // Reject is a card of its own, away from the next step.
      const act = await page.locator('section[aria-labelledby="act"]').textContent();
      expect(act).not.toContain('Reject task');
    }
    // One tap accepts from the bar.
    await page.goto(`${t.url}/operator/tasks/${seeded.all[12]}`);
    await page.locator('.action-bar').getByRole('button', { name: 'Accept, 1 day' }).click();
    await page.getByRole('status').first().waitFor();
    expect(await page.getByRole('status').first().textContent()).toContain('Task accepted');
    await ctx.close();
  });

  it('phone 390×844: messages open one reply box at a time', async () => {
    const ctx = await consoleContext(browser, t, true);
    const page = await ctx.newPage();
    await page.goto(`${t.url}/operator/messages`);
    expect(await page.locator('textarea:visible').count()).toBe(0);
    const replies = page.locator('details.reply-box > summary');
    await replies.nth(0).click();
    await replies.nth(2).click();
    expect(await page.locator('details.reply-box[open]').count()).toBe(1);
    expect(await page.locator('textarea:visible').count()).toBe(1);
    // The box that is open is the one just asked for, and it has the focus.
    expect(await page.evaluate(() => document.activeElement === document.querySelectorAll('details.reply-box')[2]?.querySelector('textarea'))).toBe(true);
    await ctx.close();
  });

  for (const phone of [true, false]) {
    it(`${phone ? 'phone 390×844' : 'desktop 1366×900'}: every console page: 44×44 targets, no serious axe violation, no sideways scroll, no jargon`, async () => {
      const ctx = await consoleContext(browser, t, phone);
      const page = await ctx.newPage();
      const problems: string[] = [];
      for (const path of pages) {
        await page.goto(`${t.url}${path}`);
        const text = await page.locator('main').innerText();
        for (const jargon of [/operator_notes/, /status_poll/, /E-mail unverified/, /unnamed sender/, /\d{4}-\d\d-\d\dT\d\d:\d\d/, /Request hash/, /SHA-256/]) {
          if (jargon.test(text)) problems.push(`${path}: shows ${jargon}`);
        }
        // Task ids in headings stay whole.
        const broken = await page.evaluate(
          () => Array.from(document.querySelectorAll('h1 .nobreak, h2 .nobreak, #task-id')).filter((el) => el.getClientRects().length > 1).length,
        );
        if (broken > 0) problems.push(`${path}: a task id breaks across lines`);
        await openAll(page);
        if (phone) for (const small of await smallTargets(page)) problems.push(`${path}: ${small}`);
        if (await sideways(page)) problems.push(`${path}: scrolls sideways`);
        for (const v of await axeViolations(page)) problems.push(`${path}: ${v}`);
      }
      // The menu's own links, open.
      if (phone) {
        await page.goto(`${t.url}/operator`);
        await page.getByText('More', { exact: true }).click();
        for (const small of await smallTargets(page)) problems.push(`menu: ${small}`);
      }
      expect(problems, problems.join('\n')).toEqual([]);
      await ctx.close();
    }, 240_000);
  }
});
