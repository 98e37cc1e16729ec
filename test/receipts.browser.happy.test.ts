import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integrateLog } from '../src/services/receipt-log/receipt-log.js';
import { taskIn } from './operator.support.js';
import { STORES, startTestApp, type TestApp, TestClock, writeTask } from './support/app.js';
import { launchBrowser } from './support/browser.js';

describe.each(STORES)('a receipt a non-expert can check, on the status page, on %s', (store) => {
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

  async function statusPage(id: string, options: { noEd25519?: boolean } = {}): Promise<{ page: Page; text: string }> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    if (options.noEd25519) {
      // A browser whose WebCrypto lacks Ed25519: importKey refuses it.
      await page.addInitScript(() => {
        const original = crypto.subtle.importKey.bind(crypto.subtle);
        crypto.subtle.importKey = ((...args: Parameters<SubtleCrypto['importKey']>) => {
          const algorithm = args[2] as { name?: string } | string;
          if ((typeof algorithm === 'string' ? algorithm : algorithm.name) === 'Ed25519')
            return Promise.reject(new DOMException('Unrecognized name', 'NotSupportedError'));
          return original(...args);
        }) as SubtleCrypto['importKey'];
      });
    }
    await page.goto(`${t.url}/tasks?id=${id}`);
    const box = page.locator('[data-receipt-check]');
    await page.waitForFunction(
      () => {
        const el = document.querySelector('[data-receipt-check]');
        return el !== null && (el.classList.contains('ok') || el.classList.contains('bad'));
      },
      undefined,
      { timeout: 10_000 },
    );
    return { page, text: (await box.textContent()) ?? '' };
  }

  it('verifies in the browser with WebCrypto Ed25519 and says so in plain words', async () => {
    const id = await taskIn(t, 'delivered');
    const { page, text } = await statusPage(id);
    expect(text).toMatch(
      /Signed by this service on .+; the result above is exactly what was signed\. \(Checked in your browser against the published keys\.\)/,
    );
    expect(await page.locator('[data-receipt-check].ok').count()).toBe(1);
    await page.context().close();
  });

  it('says where the receipt sits in the public log once the browser has checked its proof', async () => {
    const id = await taskIn(t, 'delivered');
    await integrateLog(t.deps);
    const index = ((await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as { receipt_log_index: number }).receipt_log_index;
    const { page } = await statusPage(id);
    await page.waitForSelector('[data-log-position]', { timeout: 10_000 });
    expect(await page.locator('[data-receipt-check]').textContent()).toContain(`Logged at position ${index} of the public log.`);
    await page.context().close();
  });

  it('falls back to the service’s check when the browser lacks Ed25519', async () => {
    const id = await taskIn(t, 'delivered');
    const { page, text } = await statusPage(id, { noEd25519: true });
    expect(text).toContain('the result above is exactly what was signed. (Checked by the service');
    await page.context().close();
  });

  it('says plainly when the result shown is not the one signed', async () => {
    const id = await taskIn(t, 'delivered');
    // Someone changed the stored result behind the receipt's back.
    await writeTask(t, id, { operator_notes: 'The bakery is closed on Sundays.' });
    const { page, text } = await statusPage(id);
    expect(text).toContain('This receipt does not check out: the result shown differs from the one signed');
    await page.context().close();
    const server = (await (await fetch(`${t.url}/tasks/receipt-check?id=${id}`)).json()) as { valid: boolean; checks: { name: string; ok: boolean }[] };
    expect(server.valid).toBe(false);
    expect(server.checks.find((c) => c.name === 'deliverable')?.ok).toBe(false);
  });

  it('the service check answers JSON for a valid receipt, 404 for a task without one', async () => {
    const id = await taskIn(t, 'delivered');
    const res = await fetch(`${t.url}/tasks/receipt-check?id=${id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ task_id: id, valid: true, checked_by: 'service', signed_at: expect.stringMatching(/Z$/) });
    const open = await taskIn(t, 'accepted');
    expect((await fetch(`${t.url}/tasks/receipt-check?id=${open}`)).status).toBe(404);
    expect((await fetch(`${t.url}/tasks/receipt-check?id=task-2030-00000000000000000000000000000000`)).status).toBe(404);
  });
});
