import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PHONE } from './pages.support.js';
import { postJson, STORES, type TestApp, useTestApp, validTask } from './support/app.js';
import { useBrowser } from './support/browser.js';

/**
 * Issue 31, item 5: the web form's own rules. "Where" is required once "Someone needs to be
 * physically present" is ticked, and the description has at least three words: refused by the
 * server (the form again, the problem beside its field, nothing stored or counted) and, with
 * JavaScript, by the browser before anything is sent. The REST contract is unchanged.
 */

async function taskCount(t: TestApp): Promise<number> {
  const row = await t.store.db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function postForm(t: TestApp, fields: Record<string, string>): Promise<Response> {
  return fetch(`${t.url}/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: new URLSearchParams(fields),
    redirect: 'manual',
  });
}

const FILLED = {
  task_type: 'local_physical_task',
  description: 'Check whether parcel locker 42 at the central station is in service.',
  location_required: 'true',
  location_detail: '',
  contact_email: 'agent@mail.example-agent.dev',
};

describe.each(STORES)('the web form’s own rules on %s', (store) => {
  const t = useTestApp({ store });
  const browser = useBrowser();

  it('refuses physical presence without a place: 422, the error beside "Where", values kept, nothing stored', async () => {
    const before = await taskCount(t);
    const res = await postForm(t, { ...FILLED, requester: 'Kept requester' });
    expect(res.status).toBe(422);
    const body = await res.text();
    expect(body).toContain('<p class="error" id="e-location_detail">Location is required when someone needs to be physically present');
    expect(body).toMatch(/id="f-location_detail"[^>]*aria-invalid="true"[^>]*aria-describedby="h-location_detail e-location_detail"/);
    expect(body).toContain('Please fix 1 field below.');
    expect(body).toContain('value="Kept requester"');
    expect(body).toMatch(/id="f-location_required"[^>]*checked/);
    expect(await taskCount(t)).toBe(before);

    // With a place it goes through.
    const ok = await postForm(t, { ...FILLED, location_detail: 'Central station, Springfield' });
    expect(ok.status).toBe(303);
    expect(await taskCount(t)).toBe(before + 1);
  });

  it('refuses a description under three words beside the field, with the service’s own problems in the same answer', async () => {
    const res = await postForm(t, { ...FILLED, task_type: '', description: 'Check lockerstation', location_detail: 'Springfield' });
    expect(res.status).toBe(422);
    const body = await res.text();
    expect(body).toContain('<p class="error" id="e-description">Description must have at least 3 words');
    expect(body).toContain('<p class="error" id="e-task_type">Kind of task is required');
    expect(body).toContain('Please fix 2 fields below.');
    // Too short for the service already: one message for the field, the service's.
    const short = await (await postForm(t, { ...FILLED, description: 'Fix it', location_detail: 'Springfield' })).text();
    expect(short).toContain('<p class="error" id="e-description">Description must be between 10 and 5000 characters</p>');
    // The API's value names are said as the form's choices.
    const noMail = await (await postForm(t, { ...FILLED, contact_email: '', description: 'Fix it now', location_detail: 'Springfield' })).text();
    expect(noMail).toContain('E-mail is required unless the result is shown “On the status page only”');
    expect(noMail).not.toContain('unless delivery is');
  });

  it('leaves the REST contract as it is: location_detail stays optional there', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ location_required: true, location_detail: undefined, description: 'Two words.x' }));
    expect(res.status).toBe(202);
  });

  async function fillForm(page: Page): Promise<void> {
    await page.selectOption('#f-task_type', 'local_physical_task');
    await page.fill('#f-description', FILLED.description);
    await page.fill('#f-contact_email', FILLED.contact_email);
  }

  it('with JavaScript the browser says it before sending: error beside "Where", focus on it, no request', async () => {
    const page = await browser.newPage({ viewport: PHONE, isMobile: true, hasTouch: true });
    await page.goto(`${t.url}/`);
    await fillForm(page);
    await expect(page.locator('label[for="f-location_detail"]').innerText()).resolves.toBe('Where');
    await page.locator('label.check').click();
    await expect(page.locator('label[for="f-location_detail"]').innerText()).resolves.toBe('Where (required)');
    await expect(page.locator('#f-location_detail').getAttribute('aria-required')).resolves.toBe('true');
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push(r.url());
    });
    await page.getByRole('button', { name: 'Submit for human review' }).click();
    await expect(page.locator('#e-location_detail').innerText()).resolves.toMatch(/Location is required when someone needs to be physically present/);
    await expect(page.locator('#f-location_detail').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('f-location_detail');
    await page.fill('#f-description', 'Check it');
    await page.getByRole('button', { name: 'Submit for human review' }).click();
    await expect(page.locator('#e-description').innerText()).resolves.toMatch(/at least 3 words/);
    expect(posts).toEqual([]);

    // Fixed, it goes through; unticked, "Where" is optional again.
    // Another task than the server tests' (the same one again would be a duplicate).
    await page.fill('#f-description', 'Check whether the bike lockers at the north entrance are in service.');
    await page.fill('#f-location_detail', 'Central station, Springfield');
    await Promise.all([page.waitForURL(/\/tasks\?id=/), page.getByRole('button', { name: 'Submit for human review' }).click()]);
    expect(posts).toHaveLength(1);
    await page.goto(`${t.url}/`);
    await fillForm(page);
    await page.fill('#f-description', 'Read the departures board at the central station and report delays.');
    await page.locator('label.check').click();
    await page.locator('label.check').click();
    await Promise.all([page.waitForURL(/\/tasks\?id=/), page.getByRole('button', { name: 'Submit for human review' }).click()]);
    await page.close();
  }, 60_000);

  it('without JavaScript the server refusal is what the person sees', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: PHONE });
    const page = await context.newPage();
    await page.goto(`${t.url}/`);
    await fillForm(page);
    await page.check('#f-location_required');
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('button[type=submit]')]);
    expect(response.status()).toBe(422);
    await page.waitForLoadState();
    await expect(page.locator('#e-location_detail').innerText()).resolves.toMatch(/Location is required/);
    await expect(page.locator('[role=alert]').innerText()).resolves.toMatch(/Please fix 1 field/);
    await context.close();
  });
});
