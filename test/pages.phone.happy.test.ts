import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTS } from '../src/docs/endpoints.js';
import { pngImage, uploadOk } from './attachments.support.js';
import { patchOk, submit } from './operator.support.js';
import { DESKTOP, PHONE, screenshot, seriousAxeViolations, sidewaysScroll, smallTargets } from './pages.support.js';
import { ask } from './questions.support.js';
import { STORES, startTestApp, type TestApp, TestClock, writeTask } from './support/app.js';
import { launchBrowser } from './support/browser.js';

const LONG = `A${'x'.repeat(300)} unbroken https://example-agent.dev/${'segment'.repeat(30)}`;

/**
 * Issue 31 (items 4–6, requester part): every public page in every state, in Chromium at 390×844
 * and 1366×900: tap targets of at least 44×44 px on the phone, no serious or critical axe
 * violation, no sideways scroll; the form within the phone's first screen; a delivered task read
 * as a green verified box and a sentence, the technical part folded away. Layout does not depend on
 * the store (what the pages show on each store is in pages.happy and questions.pages): the sweep runs
 * on the first one.
 */
describe.each(STORES.slice(0, 1))('the requester pages on a phone and a desktop on %s', (store) => {
  let t: TestApp;
  let browser: Browser;
  const ids: Record<'submitted' | 'asked' | 'delivered' | 'rejected', string> = { submitted: '', asked: '', delivered: '', rejected: '' };

  beforeAll(async () => {
    t = await startTestApp({ store, clock: new TestClock(new Date()) });
    browser = await launchBrowser();
    ids.submitted = await submit(t, { description: LONG, requester: `requester-${'y'.repeat(150)}`, location_detail: 'z'.repeat(200) });
    ids.asked = await submit(t, { description: 'Photograph the opening hours sign at the bakery on Main Street.' });
    await patchOk(t, ids.asked, { status: 'accepted', eta: new Date(Date.now() + 86_400_000).toISOString() });
    await ask(t, ids.asked, 'Which entrance should I use, the front or the side?');
    ids.delivered = await submit(t, { description: 'Photograph the shelf and report what is missing.', delivery: 'status_poll', contact_email: undefined });
    await patchOk(t, ids.delivered, { status: 'accepted' });
    await uploadOk(t, ids.delivered, await pngImage(), { type: 'image/png', name: 'shelf-photo-from-the-north-aisle.png' });
    await uploadOk(t, ids.delivered, 'Shelf 3 is empty.', { type: 'text/plain', name: 'notes.txt' });
    await patchOk(t, ids.delivered, { status: 'delivered', operator_notes: `Done. ${LONG}` });
    ids.rejected = await submit(t, { description: 'Log in to my bank account and move the money.' });
    await patchOk(t, ids.rejected, { status: 'rejected', operator_notes: 'This service never handles credentials.' });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Every page and state a requester can see, each opened by `go`. */
  function states(): Array<[string, (page: Page) => Promise<unknown>]> {
    const open = (path: string) => (page: Page) => page.goto(`${t.url}${path}`);
    return [
      ['home', open('/')],
      [
        'form refused',
        async (page) => {
          await page.goto(`${t.url}/`);
          await page.check('#f-location_required');
          // form.submit() skips the script's own check, as a browser without JavaScript would.
          await Promise.all([page.waitForNavigation(), page.evaluate(() => (document.querySelector('form[action="/tasks"]') as HTMLFormElement).submit())]);
        },
      ],
      ['lookup', open('/tasks')],
      ['not found', open('/tasks?id=task-2030-00000000000000000000000000000000')],
      ['submitted', open(`/tasks?id=${ids.submitted}`)],
      ['question waiting', open(`/tasks?id=${ids.asked}`)],
      ['message sent', open(`/tasks?id=${ids.asked}&sent=ask`)],
      [
        'message refused',
        async (page) => {
          await page.goto(`${t.url}/tasks?id=${ids.submitted}`);
          await page.locator('#m-message').fill('x');
          await Promise.all([
            page.waitForNavigation(),
            page.evaluate(() => (document.querySelector('form[action="/tasks/message"]') as HTMLFormElement).submit()),
          ]);
        },
      ],
      [
        'delivered, details open',
        async (page) => {
          await page.goto(`${t.url}/tasks?id=${ids.delivered}`);
          for (const summary of await page.locator('summary').all()) await summary.click();
        },
      ],
      ['rejected', open(`/tasks?id=${ids.rejected}`)],
      ['docs', open('/docs')],
      ...DOCUMENTS.map((d) => [`doc ${d.id}`, open(`/docs/${d.id}`)] as [string, (page: Page) => Promise<unknown>]),
      ['page not found', open('/no/such/page')],
    ];
  }

  for (const viewport of [PHONE, DESKTOP]) {
    const phone = viewport === PHONE;
    it(`${viewport.width}×${viewport.height}: ${phone ? '44 px tap targets, ' : ''}no serious axe violation, no sideways scroll`, async () => {
      // bypassCSP only so axe-core can be injected; the pages' own CSP is tested in pages.assets.
      const context = await browser.newContext({
        bypassCSP: true,
        viewport,
        ...(phone ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
        timezoneId: 'Europe/Berlin',
        locale: 'en-GB',
      });
      const page = await context.newPage();
      const problems: string[] = [];
      for (const [name, go] of states()) {
        await go(page);
        await screenshot(page, name);
        const overflow = await sidewaysScroll(page);
        if (overflow > 0) problems.push(`${name}: scrolls sideways by ${overflow}px`);
        if (phone) for (const small of await smallTargets(page)) problems.push(`${name}: small target ${small}`);
        for (const v of await seriousAxeViolations(page)) problems.push(`${name}: ${v}`);
      }
      await context.close();
      expect(problems).toEqual([]);
    }, 240_000);
  }

  it('phone: the home page starts the form within the first screen', async () => {
    const page = await browser.newPage({ viewport: PHONE, isMobile: true, hasTouch: true });
    await page.goto(`${t.url}/`);
    const form = await page.locator('form[action="/tasks"]').boundingBox();
    const kind = await page.locator('#f-task_type').boundingBox();
    expect(form?.y ?? Number.POSITIVE_INFINITY).toBeLessThan(PHONE.height / 2);
    // Its heading and first field show without scrolling.
    expect((kind?.y ?? Number.POSITIVE_INFINITY) + (kind?.height ?? 0)).toBeLessThan(PHONE.height);
    await page.close();
  });

  it('phone: a delivered task reads as a green verified box and a sentence, the technical part folded away', async () => {
    const page = await browser.newPage({ viewport: PHONE, isMobile: true, hasTouch: true, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
    await page.goto(`${t.url}/tasks?id=${ids.delivered}`);
    const box = page.locator('[data-receipt-check]');
    // The browser's own check turns the service's verified box into its own green one.
    await expect.poll(() => box.getAttribute('class'), { timeout: 10_000 }).toMatch(/\bok\b/);
    expect(await box.innerText()).toMatch(/^Verified\. Signed by this service on \d{1,2} \w{3} \d{4}, \d{2}:\d{2}/);
    const green = await box.evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(green).toBe('rgb(228, 243, 232)');

    // What a person sees without opening anything: no hash, no JWS, no command, no raw ISO time.
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${ids.delivered}`)).json()) as {
      deliverable_sha256: string;
      receipt: string;
      attachments: { sha256: string }[];
    };
    const visible = await page.locator('main').innerText();
    for (const hidden of [
      task.deliverable_sha256,
      task.receipt.slice(0, 40),
      ...task.attachments.map((a) => a.sha256),
      'sha256sum',
      'verify-receipt',
      'JWS',
      'jwks',
    ])
      expect(visible, hidden).not.toContain(hidden);
    expect(visible).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    expect(visible).not.toContain('localhost');
    expect(await page.locator('main time[datetime]').count()).toBeGreaterThan(3);

    // Opened, each hash is at most five lines on the phone, and the key link follows this page's address.
    for (const summary of await page.locator('summary', { hasText: 'Technical details' }).all()) await summary.click();
    const opened = await page.locator('main').innerText();
    expect(opened).toContain(task.deliverable_sha256);
    expect(opened).toContain('sha256sum');
    const lines = await page
      .locator('code.hash')
      .evaluateAll((codes) => codes.map((c) => Math.round(c.getBoundingClientRect().height / Number.parseFloat(getComputedStyle(c).lineHeight || '16'))));
    expect(lines.length).toBe(3);
    for (const n of lines) expect(n).toBeLessThanOrEqual(5);
    const keys = page.locator('a', { hasText: 'the published keys' });
    expect(await keys.getAttribute('href')).toBe('/.well-known/jwks.json');
    expect(await keys.evaluate((a) => (a as HTMLAnchorElement).href)).toBe(`${t.url}/.well-known/jwks.json`);
    await page.close();
  });

  it('without JavaScript the box is the service’s own check: green when it holds, red when the result was changed', async () => {
    const id = await submit(t, { description: 'Read the meter in the basement and report the number.' });
    await patchOk(t, id, { status: 'accepted' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'The meter reads 04211.' });
    const page = async () => (await fetch(`${t.url}/tasks?id=${id}`, { headers: { accept: 'text/html' } })).text();
    expect(await page()).toMatch(
      /class="alert receipt-check verified"[^>]*>\s*<p class="flush-top" data-receipt-result><strong>Verified\.<\/strong> Signed by this service on <time/,
    );
    await writeTask(t, id, { operator_notes: 'The meter reads 99999.' });
    expect(await page()).toMatch(
      /class="alert receipt-check failed"[^>]*>\s*<p class="flush-top" data-receipt-result><strong>This receipt does not check out\.<\/strong>/,
    );
  });
});
