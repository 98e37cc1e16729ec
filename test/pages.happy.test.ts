import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { postJson, STORES, type TestApp, useTestApp, validTask, writeTask } from './support/app.js';
import { useBrowser } from './support/browser.js';

interface ApiTask {
  task_id: string;
  status: string;
  source: string;
  task_type: string;
  description: string;
  location_required: boolean;
  location_detail: string | null;
  deadline: string | null;
  output_format: string;
  requester: string;
}

async function apiTask(t: TestApp, id: string): Promise<ApiTask> {
  const res = await fetch(`${t.url}/api/v1/tasks/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as ApiTask;
}

function idFrom(page: Page): string {
  return new URL(page.url()).searchParams.get('id') ?? '';
}

describe.each(STORES)('the web pages in Chromium on %s', (store) => {
  const t = useTestApp({ store });
  const browser = useBrowser();

  async function open(path: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
    // A fixed zone and locale: the pages' script shows times in the reader's zone.
    const page = await browser.newPage({ viewport, timezoneId: 'UTC', locale: 'en-GB' });
    await page.goto(`${t.url}${path}`);
    return page;
  }

  it('explains the service on the home page', async () => {
    const page = await open('/');
    await expect(page.title()).resolves.toBe('Human-in-the-loop task service');
    const text = await page.locator('main').innerText();
    expect(text).toMatch(/A human operator reviews every task/);
    for (const entry of t.deps.catalog) expect(text).toContain(entry.title);
    for (const rule of t.deps.profile.policy.will_not_do) expect(text).toContain(rule);
    for (const tool of ['get_human_services', 'submit_human_task', 'check_task_status', 'message_human_operator']) expect(text).toContain(tool);
    await expect(page.locator('a[href="/agent.json"]').first().isVisible()).resolves.toBe(true);
    await page.close();
  });

  it('submits the form and lands on the status page, with the task stored as a web_form task', async () => {
    const page = await open('/');
    await page.selectOption('#f-task_type', 'local_physical_task');
    await page.fill('#f-description', 'Check whether parcel locker 42 at the central station is in service.');
    await page.check('#f-location_required');
    await page.fill('#f-location_detail', 'Central station, Springfield');
    await page.fill('#f-deadline', '2030-04-01T17:00');
    await page.fill('#f-output_format', 'text_report_with_photos');
    await page.fill('#f-contact_email', 'agent@mail.example-agent.dev');
    await page.fill('#f-requester', 'Playwright, a browser test');
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('button[type=submit]')]);
    expect(response.status()).toBe(303);
    await page.waitForURL(/\/tasks\?id=task-\d{4}-[0-9a-f]{32}$/);
    await expect(page.locator('h1').innerText()).resolves.toMatch(/Local physical task\s+Waiting for review/);
    const main = await page.locator('main').innerText();
    expect(main).toContain('Check whether parcel locker 42 at the central station is in service.');
    expect(main).toContain('Central station, Springfield');
    expect(main).toMatch(/usually within 12 hours/);
    const task = await apiTask(t, idFrom(page));
    expect(task).toMatchObject({
      status: 'submitted',
      source: 'web_form',
      task_type: 'local_physical_task',
      location_required: true,
      location_detail: 'Central station, Springfield',
      // Typed in the reader's zone (UTC here) and stored with its offset.
      deadline: '2030-04-01T17:00:00+00:00',
      output_format: 'text_report_with_photos',
      requester: 'Playwright, a browser test',
    });
    await page.close();
  });

  it('takes a status-page delivery without an e-mail, empty fields left out', async () => {
    const page = await open('/');
    await page.selectOption('#f-task_type', 'human_judgment_and_feedback');
    await page.fill('#f-description', 'Which of these two headlines reads as more trustworthy, and why? A or B.');
    await page.check('input[name=delivery][value=status_poll]');
    await Promise.all([page.waitForURL(/\/tasks\?id=/), page.click('button[type=submit]')]);
    const task = await apiTask(t, idFrom(page));
    expect(task).toMatchObject({
      source: 'web_form',
      location_required: false,
      location_detail: null,
      deadline: null,
      output_format: 'text_report',
      requester: '',
    });
    await page.close();
  });

  it('shows every error next to its field, keeps what was typed, and submits once fixed', async () => {
    const page = await open('/');
    await page.fill('#f-description', 'short');
    await page.fill('#f-contact_email', 'not-an-address');
    await page.fill('#f-requester', 'Kept requester');
    await page.check('#f-location_required');
    // form.submit() skips the script's own check (pages.form.error tests it), as a browser without
    // JavaScript would: this is the server's refusal.
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.waitForNavigation(),
      page.evaluate(() => (document.querySelector('form[action="/tasks"]') as HTMLFormElement).submit()),
    ]);
    expect(response.status()).toBe(422);
    await page.waitForLoadState();

    for (const [field, message] of [
      ['task_type', /Kind of task is required/],
      ['description', /Description must be between 10 and 5000 characters/],
      ['contact_email', /E-mail must be a valid e-mail address/],
      // The form's own rule (issue 31): a place once someone must be there.
      ['location_detail', /Location is required when someone needs to be physically present/],
    ] as const) {
      const error = page.locator(`#e-${field}`);
      await expect(error.isVisible(), field).resolves.toBe(true);
      await expect(error.innerText(), field).resolves.toMatch(message);
      const input = page.locator(`#f-${field}`);
      await expect(input.getAttribute('aria-invalid'), field).resolves.toBe('true');
      await expect(input.getAttribute('aria-describedby'), field).resolves.toContain(`e-${field}`);
      // The message sits right after its field, inside the same group.
      const sameGroup = await page.evaluate(
        (f) =>
          document
            .getElementById(`f-${f}`)
            ?.closest('.field')
            ?.contains(document.getElementById(`e-${f}`)) ?? false,
        field,
      );
      expect(sameGroup, field).toBe(true);
    }
    await expect(page.locator('#e-requester').count()).resolves.toBe(0);
    await expect(page.locator('[role=alert]').innerText()).resolves.toMatch(/Please fix 4 fields/);
    await expect(page.locator('#f-description').inputValue()).resolves.toBe('short');
    await expect(page.locator('#f-contact_email').inputValue()).resolves.toBe('not-an-address');
    await expect(page.locator('#f-requester').inputValue()).resolves.toBe('Kept requester');
    await expect(page.locator('#f-location_required').isChecked()).resolves.toBe(true);

    await page.selectOption('#f-task_type', 'data_collection');
    await page.fill('#f-description', 'List the opening hours of the five public libraries in the city centre.');
    await page.fill('#f-contact_email', 'agent@mail.example-agent.dev');
    await page.fill('#f-location_detail', 'City centre');
    await Promise.all([page.waitForURL(/\/tasks\?id=/), page.click('button[type=submit]')]);
    expect((await apiTask(t, idFrom(page))).requester).toBe('Kept requester');
    await page.close();
  });

  it('finds a task from the lookup form', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
    const { task_id } = (await res.json()) as { task_id: string };
    const page = await open('/tasks');
    await page.fill('#f-id', task_id);
    await Promise.all([page.waitForURL(/\/tasks\?id=/), page.click('button[type=submit]')]);
    await expect(page.locator('main').innerText()).resolves.toContain(task_id);
    await page.close();
  });

  it('shows the estimate, the result and the receipt with how to verify it', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll' }));
    const { task_id } = (await res.json()) as { task_id: string };
    await writeTask(t, task_id, {
      status: 'accepted',
      eta: '2030-03-12T15:30:00.000Z',
      seen_by_operator_at: '2030-03-10T11:00:00.000Z',
      accepted_at: '2030-03-10T11:05:00.000Z',
      status_history: JSON.stringify([
        { status: 'submitted', at: '2030-03-10T10:00:00.000Z' },
        { status: 'accepted', at: '2030-03-10T11:05:00.000Z' },
      ]),
    });
    const page = await open(`/tasks?id=${task_id}`);
    let main = await page.locator('main').innerText();
    expect(main).toMatch(/Accepted — being worked on/);
    // Local time (the page's zone is UTC), with UTC itself in the tooltip.
    expect(main).toContain('12 Mar 2030, 15:30');
    expect(main).toContain('10 Mar 2030, 11:00');
    expect(await page.locator('time[title="12 Mar 2030, 15:30 UTC"]').count()).toBeGreaterThan(0);

    await writeTask(t, task_id, {
      status: 'delivered',
      operator_notes: 'The bakery opens at 07:00 on Sundays.\nPhotos were not allowed.',
      delivered_at: '2030-03-11T09:00:00.000Z',
      // Issued by this service (its iss): one carried over from elsewhere is shown apart (import.happy).
      receipt: `eyJhbGciOiJFZERTQSJ9.${Buffer.from(JSON.stringify({ task_id: 't', iss: t.config.baseUrl })).toString('base64url')}.c2lnbmF0dXJl`,
      deliverable_sha256: 'a'.repeat(64),
      receipt_issued_at: '2030-03-11T09:00:00.000Z',
      status_history: JSON.stringify([
        { status: 'submitted', at: '2030-03-10T10:00:00.000Z' },
        { status: 'accepted', at: '2030-03-10T11:05:00.000Z' },
        { status: 'delivered', at: '2030-03-11T09:00:00.000Z' },
      ]),
    });
    await page.reload();
    main = await page.locator('main').innerText();
    expect(main).toMatch(/The result\s+The bakery opens at 07:00 on Sundays.\nPhotos were not allowed./);
    expect(main).toContain('Signed receipt');
    // The hash, the JWS and the steps wait behind "Technical details" (issue 31).
    expect(main).not.toContain('a'.repeat(64));
    await page.getByRole('region', { name: 'Signed receipt' }).locator('summary', { hasText: 'Technical details' }).click();
    main = await page.locator('main').innerText();
    expect(main).toContain('a'.repeat(64));
    expect(main).toMatch(/How to verify it/);
    await expect(page.locator('a[href="/.well-known/jwks.json"]').count()).resolves.toBe(1);
    await expect(page.locator('pre.receipt').innerText()).resolves.toContain('eyJhbGciOiJFZERTQSJ9');
    const history = await page.locator('table tbody tr').allInnerTexts();
    expect(history.map((row) => row.split('\t')[0])).toEqual(['Submitted', 'Accepted', 'Delivered']);
    await page.close();
  });

  it('fits a phone screen without sideways scrolling', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: `A long unbroken word ${'x'.repeat(300)} in a description.` }));
    const { task_id } = (await res.json()) as { task_id: string };
    for (const path of ['/', `/tasks?id=${task_id}`, '/docs', '/docs/services', '/tasks']) {
      const page = await open(path, { width: 360, height: 740 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
      await page.close();
    }
  });
});
