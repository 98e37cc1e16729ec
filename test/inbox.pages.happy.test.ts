import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { patchOk, submit } from './operator.support.js';
import { postJson, TEST_ADMIN_KEY, TestClock, useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';

/**
 * Issue 31's console pages in Chromium at 390×844 and 1366×900: the queue's toolbar (and its open
 * filter sheet), the bulk selection, the Snoozed view, a task page with a held action, templates.
 * No sideways scroll, tap targets of 44 px on the phone, no serious or critical axe violation.
 * With SCREENSHOTS=1 each page is saved to /tmp/i31k-*.png.
 */

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

async function problemsOf(page: Page, phone: boolean): Promise<string[]> {
  const found = await page.evaluate((checkTargets) => {
    const out: string[] = [];
    const doc = document.documentElement;
    if (doc.scrollWidth > doc.clientWidth) out.push(`scrollWidth ${doc.scrollWidth} > ${doc.clientWidth}`);
    if (checkTargets) {
      const selector =
        '.queue-toolbar button, .queue-toolbar select, .queue-toolbar input:not([type=hidden]), .queue-toolbar summary, .toolbar-links a, .bulk button, .bulk input:not([type=hidden]), .bulk .check, .held button, .snooze summary, .snooze button, .snooze select, .templates-card summary, .snoozed-list button';
      for (const el of Array.from(document.querySelectorAll(selector))) {
        const box = (el as HTMLElement).getBoundingClientRect();
        if (box.width <= 1 && box.height <= 1) continue;
        if (box.height < 43.5 && !(el instanceof HTMLInputElement && el.type === 'checkbox'))
          out.push(`${el.tagName.toLowerCase()} "${(el.textContent ?? '').trim().slice(0, 30)}" ${Math.round(box.height)}px`);
      }
    }
    return out;
  }, phone);
  await page.addScriptTag({ content: AXE });
  const axe = await page.evaluate(async () => {
    const w = window as unknown as {
      axe: { run: (d: Document, o: unknown) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
    };
    const result = await w.axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${v.id}: ${v.nodes
            .map((n) => n.target.join(' '))
            .slice(0, 3)
            .join(', ')}`,
      );
  });
  return [...found, ...axe];
}

describe('issue 31 console pages in Chromium', () => {
  const clock = new TestClock(new Date('2030-09-01T08:00:00.000Z'));
  const t = useTestApp({ clock, env: { CONSOLE_UNDO_SECONDS: '60' } });
  const browser = useBrowser();

  it('the toolbar, bulk selection, Snoozed view, a held action and templates fit a phone and a desktop', async () => {
    const ids: string[] = [];
    for (const [what, where] of [
      ['Check whether the bakery on Elm Row opens before 7 on Sundays', 'Springfield, Elm Row 3'],
      ['Photograph the opening hours sign of the city museum', 'Shelbyville'],
      ['Count the free parking spaces behind the town hall at noon', 'Springfield town hall'],
    ] as const) {
      ids.push(await submit(t, { description: `${what}.`, location_detail: where, deadline: '2030-09-04T12:00:00Z' }));
      clock.advance(60_000);
    }
    await patchOk(t, ids[2] ?? '', { status: 'accepted', eta: '2030-09-02T12:00:00Z' });
    const { cookie, csrf } = await signIn(t);
    expect((await postForm(t, `/operator/tasks/${ids[1]}/snooze`, { _csrf: csrf, hours: '24' }, cookie)).status).toBe(303);
    expect((await postForm(t, `/operator/tasks/${ids[0]}/accept`, { _csrf: csrf, eta_local: '2030-09-03T10:00' }, cookie)).status).toBe(303);
    await postForm(t, '/operator/templates', { _csrf: csrf, kind: 'result', name: 'Shop hours', body: 'Opening hours checked on site.' }, cookie);
    await postJson(`${t.url}/api/v1/messages`, { message: `Any news on ${ids[2]}?`, reply_to: 'waiting@mail.example-agent.dev' });

    const problems: string[] = [];
    for (const phone of [true, false]) {
      const context = await browser.newContext({
        bypassCSP: true, // only so axe-core can be injected
        ...(phone ? { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } : { viewport: { width: 1366, height: 900 } }),
      });
      const page = await context.newPage();
      await page.goto(`${t.url}/operator/login`);
      await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/operator(\?|$)/);
      for (const [name, path, open] of [
        ['queue', '/operator?status=open', false],
        ['filters', '/operator?status=open&sort=deadline&location=onsite', true],
        ['search', '/operator?status=open&q=bakery', false],
        ['select', '/operator?status=open&select=1&order=oldest', false],
        ['snoozed', '/operator?status=snoozed', false],
        ['held', `/operator/tasks/${ids[0]}`, false],
        ['templates', `/operator/tasks/${ids[2]}?template=`, true],
        ['templates-page', '/operator/templates', false],
      ] as const) {
        await page.goto(`${t.url}${path}`);
        if (open)
          await page.evaluate(() => document.querySelectorAll('details.toolbar-sheet, details.templates-card').forEach((d) => d.setAttribute('open', '')));
        for (const p of await problemsOf(page, phone)) problems.push(`${phone ? 'phone' : 'desktop'} ${name}: ${p}`);
        if (process.env.SCREENSHOTS) await page.screenshot({ path: `/tmp/i31k-${name}-${phone ? '390' : '1366'}.png`, fullPage: false });
      }
      await context.close();
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
