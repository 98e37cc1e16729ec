import { mkdirSync } from 'node:fs';
import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../src/domain/answers/answer-example.js';
import { pngImage, uploadOk } from './attachments.support.js';
import { DARK, LIGHT, openCard, routeBaseUrl } from './mcp.apps.support.js';
import { call, type Json, useMcpClient } from './mcp.support.js';
import { patchOk } from './operator.support.js';
import { ask, publicTask } from './questions.support.js';
import { TestClock, useTestApp, validTask } from './support/app.js';
import { seriousAxeViolations } from './support/axe.js';
import { useBrowser } from './support/browser.js';

/**
 * The task card as a real host renders it (contract "MCP Apps: the task in the conversation"):
 * the package's AppBridge in Chromium, the official MCP client, the real app. Screenshots go to
 * .cache/mcp-apps/ (looked at when the card changes).
 */

const BASE_URL = 'http://card.test';
const SHOTS = '.cache/mcp-apps';

type Card = { text: string; csp: { connectDomains: string[]; resourceDomains: string[] } };

async function readCard(client: ReturnType<typeof useMcpClient>): Promise<Card> {
  const read = await client.readResource({ uri: 'ui://human-task/task-card.html' });
  const doc = read.contents[0] as unknown as { text: string; _meta: { ui: { csp: Card['csp'] } } };
  return { text: doc.text, csp: doc._meta.ui.csp };
}

/** The card's receipt box says "Verified." (read without waiting: the box appears once the check ends). */
async function expectVerified(frame: Frame): Promise<void> {
  const receipt = () =>
    frame
      .locator('#receipt')
      .textContent({ timeout: 2000 })
      .catch(() => '');
  await expect.poll(receipt, { timeout: 10_000 }).toMatch(/^Verified\. Signed by the service on /);
}

async function layoutProblems(frame: Frame): Promise<string[]> {
  return frame.evaluate(() => {
    const problems: string[] = [];
    if (document.documentElement.scrollWidth > window.innerWidth)
      problems.push(`sideways scroll: ${document.documentElement.scrollWidth} > ${window.innerWidth}`);
    for (const control of Array.from(document.querySelectorAll('button, textarea, a[href]'))) {
      const box = control.getBoundingClientRect();
      if (box.width > 0 && (box.height < 44 || box.width < 44)) problems.push(`${control.tagName} ${box.width}x${box.height}`);
    }
    return problems;
  });
}

describe('MCP Apps task card in a host (AppBridge, Chromium)', { timeout: 60_000 }, () => {
  const clock = new TestClock();
  const t = useTestApp({ store: 'sqlite', clock, env: { BASE_URL, ALLOWED_HOSTS: '127.0.0.1' } });
  const client = useMcpClient(t);
  const browser = useBrowser();

  async function page(width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: false });
    await routeBaseUrl(context, BASE_URL, t);
    return context.newPage();
  }

  it('follows a real task: the question answered in the card, then the table, the photo and "Verified"', async () => {
    mkdirSync(SHOTS, { recursive: true });
    const card = await readCard(client);
    const input = {
      description: 'Check whether the bakery on Main Street opens on Sundays and photograph its opening hours sign',
      response_schema: EXAMPLE_RESPONSE_SCHEMA,
    };
    const submitted = await call(client, 'submit_human_task', validTask(input));
    expect(submitted.isError).toBeFalsy();
    const id = String(submitted.structuredContent.task_id);

    const p = await page(360);
    const frame = await openCard(p, client, card, input, submitted, LIGHT);
    await expect.poll(() => frame.locator('#status').textContent(), { timeout: 10_000 }).toBe('Waiting for review');
    await expect.poll(() => frame.locator('h1').textContent(), { timeout: 10_000 }).toBe('Check whether the bakery on Main Street opens on Sundays…');

    // The operator accepts and asks through the admin API; the card, waiting in check_task_status, shows the question.
    // The test clock stands still: each change moves it on, so updated_at changes as it would.
    clock.advance(60_000);
    await patchOk(t, id, { status: 'accepted', eta: new Date(clock.now().getTime() + 3_600_000).toISOString() });
    clock.advance(60_000);
    const question = await ask(t, id, 'Which Main Street: the one in the old town or the one by the station?');
    await expect.poll(() => frame.locator('#question-text').textContent(), { timeout: 15_000 }).toBe(question.question);
    expect(await frame.locator('#status').textContent()).toBe('Accepted — being worked on');
    expect(await frame.locator('#facts dt').allTextContents()).toContain('Expected by');
    expect(await seriousAxeViolations(frame as unknown as Page)).toEqual([]);
    expect(await layoutProblems(frame)).toEqual([]);
    await p.screenshot({ path: `${SHOTS}/question-360-light.png` });

    // An empty answer is refused in the card, in plain words; a real one typed with the keyboard reaches the service.
    await frame.locator('#answer-send').click();
    await expect.poll(() => frame.locator('#answer-error').textContent(), { timeout: 5_000 }).toBe('Write an answer first.');
    await frame.locator('#answer').focus();
    await p.keyboard.type('The one in the old town.');
    await p.keyboard.press('Tab');
    expect(await frame.evaluate(() => document.activeElement?.id)).toBe('answer-send');
    await p.keyboard.press('Enter');
    await expect.poll(async () => ((await publicTask(t, id)).questions as Json[])[0]?.answer, { timeout: 10_000 }).toBe('The one in the old town.');
    await expect.poll(() => frame.locator('#question').isHidden(), { timeout: 10_000 }).toBe(true);

    // The operator delivers a structured result with a photo: table, thumbnail, "Verified".
    await uploadOk(t, id, await pngImage(), { type: 'image/png', name: 'sign.png' });
    clock.advance(60_000);
    await patchOk(t, id, { status: 'delivered', result: EXAMPLE_RESULT });
    await expect.poll(() => frame.locator('#status').textContent(), { timeout: 15_000 }).toBe('Delivered');
    expect(await frame.locator('#result th').allTextContents()).toEqual(expect.arrayContaining(['open on sundays', 'hours', 'day', 'opens']));
    expect(
      await frame.evaluate(() =>
        Array.from(document.querySelectorAll('#result-body > table > tbody > tr')).map((row) => [row.children[0]?.textContent, row.children[1]?.textContent]),
      ),
    ).toEqual(
      expect.arrayContaining([
        ['open on sundays', 'true'],
        ['note', 'Closed on Mondays.'],
        ['checked on', '2030-03-10'],
      ]),
    );
    await expect
      .poll(() => frame.locator('#thumbs img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), { timeout: 10_000 })
      .toBe(true);
    await expectVerified(frame);
    await p.context().close();
  });

  it.each([
    [360, 'light', LIGHT],
    [720, 'light', LIGHT],
    [360, 'dark', DARK],
    [720, 'dark', DARK],
  ] as const)('reads well at %i px in the %s theme: axe clean, no sideways scroll, 44 px controls', async (width, name, context) => {
    const card = await readCard(client);
    const submitted = await call(client, 'submit_human_task', validTask({ response_schema: EXAMPLE_RESPONSE_SCHEMA }));
    const id = String(submitted.structuredContent.task_id);
    await patchOk(t, id, { status: 'accepted' });
    await uploadOk(t, id, await pngImage(), { type: 'image/png', name: 'sign.png' });
    await patchOk(t, id, { status: 'delivered', result: EXAMPLE_RESULT });
    const checked = await call(client, 'check_task_status', { task_id: id });
    const p = await page(width);
    const frame = await openCard(p, client, card, { task_id: id }, checked, context);
    await expectVerified(frame);
    expect(await frame.evaluate(() => document.documentElement.getAttribute('data-theme'))).toBe(name);
    expect(await seriousAxeViolations(frame as unknown as Page)).toEqual([]);
    expect(await layoutProblems(frame)).toEqual([]);
    await p.screenshot({ path: `${SHOTS}/delivered-${width}-${name}.png` });
    await p.context().close();
  });
});
