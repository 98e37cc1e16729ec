import { createHash } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { adminGet, type Json, taskIn } from './operator.support.js';
import { STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock } from './support/app.js';
import { launchBrowser } from './support/browser.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe.each(STORES)('delivery asks for confirmation, with the hash computed by the server, on %s', (store) => {
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

  it('a deliver form posted without confirmation shows the hash and changes nothing; confirming delivers', async () => {
    const { cookie, csrf } = await signIn(t);
    const id = await taskIn(t, 'accepted');
    const notes = 'Open Sundays 08:00–12:00.\r\nPhoto attached ✓';
    const first = await postForm(t, `/operator/tasks/${id}/deliver`, { _csrf: csrf, operator_notes: notes, confirmed: '0' }, cookie);
    expect(first.status).toBe(200);
    const page = await first.text();
    expect(page).toContain(sha256(notes.replace(/\r\n/g, '\n')));
    expect(page).toContain('Confirm: deliver &amp; sign receipt');
    expect(((await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json).status).toBe('accepted');
    const done = await postForm(t, `/operator/tasks/${id}/deliver`, { _csrf: csrf, operator_notes: notes, confirmed: '1' }, cookie);
    expect(done.status).toBe(303);
    const task = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    expect(task).toMatchObject({ status: 'delivered', deliverable_sha256: sha256(notes.replace(/\r\n/g, '\n')) });
  });

  it('without JavaScript on a phone: Deliver leads to the confirmation step, whose hash is the one signed', async () => {
    const id = await taskIn(t, 'accepted');
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await page.goto(`${t.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.goto(`${t.url}/operator/tasks/${id}`);
    const notes = 'Line one\nLine two, with “quotes” and <b>markup</b>';
    await page.getByLabel(/Result for the requester/).fill(notes);
    await page.getByRole('button', { name: 'Deliver & sign receipt' }).click();
    expect((await page.locator('#confirm-hash').textContent())?.trim()).toBe(sha256(notes));
    await page.getByRole('button', { name: 'Confirm: deliver & sign receipt' }).click();
    await page.getByRole('status').first().waitFor();
    expect(await page.getByRole('status').first().textContent()).toContain('Delivered');
    const task = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    expect(task).toMatchObject({ status: 'delivered', operator_notes: notes, deliverable_sha256: sha256(notes) });
    await context.close();
  });
});
