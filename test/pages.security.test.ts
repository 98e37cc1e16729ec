import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { postJson, STORES, useTestApp, validTask, writeTask } from './support/app.js';
import { useBrowser } from './support/browser.js';

const SCRIPT = '<script>window.__pwned = true; alert("script")</script>';
const IMG = '<img src=x onerror="window.__pwned = true; alert(1)">';
const ATTR = '" autofocus onfocus="window.__pwned=true" x="';

/** Fails the test if the page ran anything an agent wrote. */
async function watch(page: Page): Promise<() => Promise<void>> {
  let dialogs = 0;
  page.on('dialog', (dialog) => {
    dialogs++;
    void dialog.dismiss();
  });
  return async () => {
    expect(dialogs).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned ?? false)).toBe(false);
    expect(await page.locator('main script, main img, main [onerror], main [onfocus]').count()).toBe(0);
  };
}

describe.each(STORES)('agent text on the pages, in Chromium, on %s', (store) => {
  const t = useTestApp({ store });
  const browser = useBrowser();

  it('shows <script> and <img onerror> in a task as text on the status page', async () => {
    const res = await postJson(
      `${t.url}/api/v1/tasks`,
      validTask({
        description: `Check this: ${SCRIPT} and ${IMG} please.`,
        location_detail: IMG,
        requester: ATTR,
        output_format: SCRIPT,
        delivery: 'status_poll',
      }),
    );
    expect(res.status).toBe(202);
    const { task_id } = (await res.json()) as { task_id: string };
    await writeTask(t, task_id, { operator_notes: `Reply with ${SCRIPT}`, status: 'rejected' });

    const page = await browser.newPage();
    const check = await watch(page);
    await page.goto(`${t.url}/tasks?id=${task_id}`);
    const main = await page.locator('main').innerText();
    expect(main).toContain(`Check this: ${SCRIPT} and ${IMG} please.`);
    expect(main).toContain(IMG);
    expect(main).toContain(ATTR);
    expect(main).toContain(`Reply with ${SCRIPT}`);
    await check();

    // The markdown twin keeps agent text inside fences.
    const md = await (await fetch(`${t.url}/tasks?id=${task_id}`, { headers: { accept: 'text/markdown' } })).text();
    expect(md).toMatch(/```\nCheck this: <script>/);
    await page.close();
  });

  it('keeps a fence-breaking description inside its fence in markdown', async () => {
    const res = await postJson(
      `${t.url}/api/v1/tasks`,
      validTask({ description: 'Before\n```\n# Injected heading\n[link](javascript:alert(1))\n````\nafter' }),
    );
    const { task_id } = (await res.json()) as { task_id: string };
    const md = await (await fetch(`${t.url}/tasks?id=${task_id}`, { headers: { accept: 'text/markdown' } })).text();
    expect(md).toContain('`````\nBefore\n```\n# Injected heading');
    // The longest backtick run inside is four, so five open and close the block around all of it.
    expect(md).toContain('after\n`````\n');
  });

  it('shows <script> and <img onerror> typed into the form as text when the form comes back', async () => {
    const page = await browser.newPage();
    const check = await watch(page);
    await page.goto(`${t.url}/`);
    await page.fill('#f-description', SCRIPT.slice(0, 9));
    await page.fill('#f-location_detail', IMG);
    await page.fill('#f-requester', ATTR);
    await page.fill('#f-output_format', SCRIPT);
    // form.submit() skips the script's own check of the description, so the server answers.
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.waitForNavigation(),
      page.evaluate(() => (document.querySelector('form[action="/tasks"]') as HTMLFormElement).submit()),
    ]);
    await page.waitForLoadState();
    await expect(page.locator('#f-location_detail').inputValue()).resolves.toBe(IMG);
    await expect(page.locator('#f-requester').inputValue()).resolves.toBe(ATTR);
    await expect(page.locator('#f-output_format').inputValue()).resolves.toBe(SCRIPT);
    await expect(page.locator('#f-description').inputValue()).resolves.toBe(SCRIPT.slice(0, 9));
    await check();
    await page.close();
  });

  it('escapes a hostile id on the 404 page', async () => {
    const page = await browser.newPage();
    const check = await watch(page);
    await page.goto(`${t.url}/tasks?id=${encodeURIComponent(IMG)}`);
    await expect(page.locator('main').innerText()).resolves.toContain(IMG);
    await check();
    await page.close();
  });

  it('keeps task pages out of search engines and their ids out of Referer headers', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
    const { task_id } = (await res.json()) as { task_id: string };
    const page = await fetch(`${t.url}/tasks?id=${task_id}`);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(await page.text()).toContain('<meta name="robots" content="noindex, nofollow">');
  });
});
