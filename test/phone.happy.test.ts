import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTS } from '../src/docs/endpoints.js';
import { patchOk, submit } from './operator.support.js';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock } from './support/app.js';
import { seriousAxeViolations as axeViolations } from './support/axe.js';
import { launchBrowser } from './support/browser.js';

const LONG = `A${'x'.repeat(400)} unbroken https://example-agent.dev/${'segment'.repeat(40)}`;

interface PageCheck {
  overflow: { scrollWidth: number; clientWidth: number };
  smallTargets: string[];
}

/** Horizontal overflow, and visible controls under 44 CSS px tall (inline text links are exempt). */
async function inspect(page: Page): Promise<PageCheck> {
  return page.evaluate(() => {
    const doc = document.documentElement;
    const small: string[] = [];
    const controls = document.querySelectorAll(
      'button, .btn, .button, nav a, .tabs a, select, input:not([type=hidden]):not([type=radio]):not([type=checkbox]), summary, .choice, .check',
    );
    for (const el of Array.from(controls)) {
      const box = (el as HTMLElement).getBoundingClientRect();
      // Not a target: hidden, or visually hidden behind its label (a styled file input).
      if ((box.width <= 1 && box.height <= 1) || getComputedStyle(el).opacity === '0') continue;
      if (box.height < 43.5)
        small.push(
          `${el.tagName.toLowerCase()}.${(el as HTMLElement).className || ''} "${(el.textContent ?? '').trim().slice(0, 30)}" ${Math.round(box.height)}px`,
        );
    }
    // The navigation fits without scrolling of its own.
    for (const nav of Array.from(document.querySelectorAll('nav.main, .nav'))) {
      if (nav.scrollWidth > nav.clientWidth + 1) small.push(`navigation scrolls: ${nav.scrollWidth} > ${nav.clientWidth}`);
    }
    return { overflow: { scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth }, smallTargets: small };
  });
}

// Layout does not depend on the store (what the pages show on each store is in pages and console
// tests): the browser sweep runs on the first one, as in inbox.layout.happy.test.ts.
describe.each(STORES.slice(0, 1))('every page on a phone and a desktop on %s', (store) => {
  let t: TestApp;
  let browser: Browser;
  const paths: { public: string[]; console: string[] } = { public: [], console: [] };
  let acceptedId = '';
  let submittedId = '';
  beforeAll(async () => {
    t = await startTestApp({ store, clock: new TestClock(new Date()) });
    browser = await launchBrowser();
    const submitted = await submit(t, { description: LONG, requester: `requester-${'y'.repeat(150)}`, location_detail: 'z'.repeat(200) });
    const accepted = await submit(t, { description: `Accepted task. ${LONG}` });
    await patchOk(t, accepted, { status: 'accepted', eta: new Date(Date.now() + 86_400_000).toISOString() });
    const delivered = await submit(t, { description: `Delivered task. ${LONG}`, delivery: 'status_poll', contact_email: undefined });
    await patchOk(t, delivered, { status: 'accepted' });
    await patchOk(t, delivered, { status: 'delivered', operator_notes: `Done. ${LONG}` });
    await postJson(`${t.url}/api/v1/messages`, {
      message: `Please withdraw ${submitted}. ${LONG}`,
      reply_to: 'asker@mail.example-agent.dev',
      subject: 'x'.repeat(150),
    });
    acceptedId = accepted;
    submittedId = submitted;
    paths.public = [
      '/',
      '/tasks',
      ...[submitted, accepted, delivered].map((id) => `/tasks?id=${id}`),
      '/docs',
      ...DOCUMENTS.map((d) => `/docs/${d.id}`),
      '/no/such/page',
    ];
    paths.console = [
      '/operator',
      '/operator?status=all',
      ...[submitted, accepted, delivered].map((id) => `/operator/tasks/${id}`),
      '/operator/messages',
      '/operator/blocklist',
      '/operator/outbox',
      '/operator/stats',
      '/operator/service-level',
    ];
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function context(phone: boolean, signedIn: boolean): Promise<BrowserContext> {
    // bypassCSP only so axe-core can be injected; the pages' own CSP is tested elsewhere.
    const ctx = await browser.newContext({
      bypassCSP: true,
      ...(phone ? { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : { viewport: { width: 1280, height: 900 } }),
    });
    if (signedIn) {
      const page = await ctx.newPage();
      await page.goto(`${t.url}/operator/login`);
      await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${t.url}/operator`);
      await page.close();
    }
    return ctx;
  }

  for (const phone of [true, false]) {
    it(`${phone ? 'phone 390×844' : 'desktop'}: no sideways scroll${phone ? ', 44 px tap targets' : ''}, no serious axe violation`, async () => {
      const problems: string[] = [];
      for (const [kind, list] of [
        ['public', paths.public],
        ['console', paths.console],
      ] as const) {
        const ctx = await context(phone, kind === 'console');
        const page = await ctx.newPage();
        // Pages that only a form post shows: the refused status-page message form, the delivery confirmation.
        const posted = kind === 'public' ? ['message form refused'] : ['delivery confirmation'];
        for (const path of [...list, ...posted, ...(kind === 'console' ? ['/operator/login'] : [])]) {
          if (path === '/operator/login') await ctx.clearCookies();
          if (path === 'message form refused') {
            await page.goto(`${t.url}/tasks?id=${submittedId}`);
            await page.locator('#m-message').fill('x');
            await Promise.all([
              page.waitForNavigation(),
              page.evaluate(() => (document.querySelector('form[action="/tasks/message"]') as HTMLFormElement).submit()),
            ]);
          } else if (path === 'delivery confirmation') {
            await page.goto(`${t.url}/operator/tasks/${acceptedId}`);
            await page.locator('#notes').fill(`Result. ${LONG}`);
            // form.submit() skips the confirm() handler, as a browser without script would.
            await Promise.all([
              page.waitForNavigation(),
              page.evaluate(() => (document.querySelector('form[action$="/deliver"]') as HTMLFormElement).submit()),
            ]);
            if (!(await page.content()).includes('Confirm: deliver')) problems.push('delivery confirmation page not shown');
          } else {
            await page.goto(`${t.url}${path}`);
          }
          const check = await inspect(page);
          if (check.overflow.scrollWidth > check.overflow.clientWidth)
            problems.push(`${path}: scrollWidth ${check.overflow.scrollWidth} > ${check.overflow.clientWidth}`);
          if (phone && check.smallTargets.length > 0) problems.push(`${path}: small targets ${check.smallTargets.slice(0, 5).join('; ')}`);
          for (const v of await axeViolations(page)) problems.push(`${path}: ${v}`);
        }
        await ctx.close();
      }
      expect(problems).toEqual([]);
    }, 180_000);
  }

  it('a browser on an unknown path gets an HTML 404 with the site chrome; agents keep markdown and JSON', async () => {
    const htmlRes = await fetch(`${t.url}/no/such/page`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(htmlRes.status).toBe(404);
    expect(htmlRes.headers.get('content-type')).toMatch(/^text\/html/);
    const body = await htmlRes.text();
    expect(body).toContain('Page not found');
    expect(body).toContain('href="/tasks"');
    const md = await fetch(`${t.url}/no/such/page`);
    expect(md.headers.get('content-type')).toMatch(/^text\/markdown/);
    const json = await fetch(`${t.url}/no/such/page`, { headers: { accept: 'application/json' } });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
