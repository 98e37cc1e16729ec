import { createHash } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { verifyReceipt } from '../src/receipts/verify.js';
import { signIn } from './console.support.js';
import { adminGet, type Json, patchOk, submit } from './operator.support.js';
import { postJson, STORES, TEST_ADMIN_KEY, TestClock, useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';

const SHOTS = process.env.CONSOLE_SCREENSHOTS;

// Playwright's own assertions are not vitest's: small waits instead.
async function visible(locator: Locator): Promise<void> {
  await locator.first().waitFor({ state: 'visible', timeout: 10_000 });
}
async function textOf(locator: Locator): Promise<string> {
  await visible(locator);
  return (await locator.first().textContent()) ?? '';
}
async function hasText(locator: Locator, expected: string): Promise<void> {
  await expect.poll(async () => (await locator.first().textContent())?.trim(), { timeout: 10_000 }).toBe(expected);
}

describe.each(STORES)('operator console in a browser on %s', (store) => {
  // The browser's clock is real, so the service's is too (ETA chips count from the browser's now).
  const clock = new TestClock(new Date());
  const t = useTestApp({ store, clock });
  const browser = useBrowser();

  async function signedIn(options: { mobile?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({
      timezoneId: 'Europe/Paris',
      viewport: options.mobile ? { width: 390, height: 844 } : { width: 1280, height: 900 },
      ...(options.mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
    });
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${t.url}/operator`);
    expect(new URL(page.url()).pathname).toBe('/operator/login');
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${t.url}/operator`);
    return page;
  }

  it('takes a task through sign-in, accept with an ETA, deliver with a live hash, and shows the receipt publicly', async () => {
    const id = await submit(t, {
      delivery: 'status_poll',
      contact_email: undefined,
      requester: 'route-planner-agent',
      description:
        'Walk to the bakery at 12 Main Street, Springfield and check whether it opens on Sunday mornings. Success: opening hours with a photo of the sign.',
    });
    const other = await submit(t, {
      task_type: 'ai_output_review',
      description: 'Read three product descriptions and say which one sounds most natural to a native speaker.',
      requester: 'copy-bot',
    });
    await postJson(`${t.url}/api/v1/messages`, {
      message: `Question about ${other}: can you also check tone?`,
      reply_to: 'agent@mail.example-agent.dev',
      subject: 'Tone',
    });

    const page = await signedIn();
    const cookies = await page.context().cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'hts_operator', httpOnly: true, sameSite: 'Strict', path: '/operator', secure: false });

    await expect.poll(() => page.locator('.queue .item').count()).toBeGreaterThanOrEqual(2);
    await visible(page.locator(`a[href="/operator/tasks/${id}"]`).getByText('New'));
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/queue-${store}.png`, fullPage: true });

    await page.locator(`a[href="/operator/tasks/${id}"]`).click();
    await page.waitForURL(`**/operator/tasks/${id}`);
    // Named by its description, not its type (issue 31); the delivery said in words.
    await visible(page.getByRole('heading', { level: 1, name: /^Walk to the bakery at 12 Main Street/ }));
    await visible(page.getByText('route-planner-agent'));
    await visible(page.getByText('Checks the status page — the result is shown there'));
    const seen = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(seen.seen_by_operator_at).not.toBeNull();
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/detail-submitted-${store}.png`, fullPage: true });

    // The ETA picker shows the operator's own zone; 18:00 in Paris in January is 17:00 UTC.
    await hasText(page.locator('[data-tz]').first(), 'Europe/Paris');
    await page.getByLabel(/Delivery estimate/).fill('2031-01-15T18:00');
    await page.getByRole('button', { name: 'Accept task' }).click();
    expect(await textOf(page.getByRole('status'))).toContain('Task accepted');
    const accepted = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(accepted).toMatchObject({ status: 'accepted', eta: '2031-01-15T17:00:00.000Z' });

    const notes = 'Open Sundays 08:00–12:00.\nThe sign by the door says so; photo taken at 09:14. ✓';
    await page.getByLabel(/Result for the requester/).fill(notes);
    const expected = createHash('sha256').update(notes, 'utf8').digest('hex');
    await hasText(page.locator('#notes-hash'), expected);
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/detail-accepted-${store}.png`, fullPage: true });
    await page.getByRole('button', { name: 'Deliver & sign receipt' }).click();
    expect(await textOf(page.getByRole('status'))).toContain('Delivered');
    await page.locator('section[aria-labelledby="act"] details.tech summary').click();
    await visible(page.getByText(expected));
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/detail-delivered-${store}.png`, fullPage: true });

    const delivered = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(delivered).toMatchObject({ status: 'delivered', operator_notes: notes, deliverable_sha256: expected });
    const jwks = await (await fetch(`${t.url}/.well-known/jwks.json`)).json();
    const verdict = await verifyReceipt(String(delivered.receipt), { jwks, expectedTaskId: id, operatorNotes: String(delivered.operator_notes) });
    expect(verdict.valid).toBe(true);

    await page.goto(`${t.url}/tasks?id=${id}`);
    await visible(page.getByRole('heading', { name: 'Signed receipt' }));
    await hasText(page.locator('.receipt'), String(delivered.receipt));
    await page.context().close();
  });

  it('rejects with a canned reason and shows messages naming the task', async () => {
    const id = await submit(t, { description: 'Find out the home address of the person who runs this account.' });
    await postJson(`${t.url}/api/v1/messages`, {
      message: `Please withdraw ${id}, we no longer need it.`,
      reply_to: 'agent@mail.example-agent.dev',
      subject: 'Withdraw',
    });
    const page = await signedIn({ mobile: true });
    // The queue flags a task that a message asks to withdraw.
    expect(await textOf(page.locator(`a[href="/operator/tasks/${id}"] .badge.danger`))).toBe('Withdrawal?');
    await page.goto(`${t.url}/operator/tasks/${id}`);
    await visible(page.getByText('Withdrawal requested?'));
    await visible(page.getByText(`Please withdraw ${id}, we no longer need it.`));
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/detail-mobile-${store}.png`, fullPage: true });
    await page.getByRole('button', { name: 'Privacy' }).click();
    await page.getByRole('button', { name: 'Reject task' }).click();
    expect(await textOf(page.getByRole('status'))).toContain('Task rejected');
    const task = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    expect(task).toMatchObject({ status: 'rejected', operator_notes: 'Rejected at review: the task would invade someone’s privacy.' });

    await page.goto(`${t.url}/operator?status=rejected`);
    await visible(page.locator(`a[href="/operator/tasks/${id}"]`));
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/queue-mobile-${store}.png`, fullPage: true });
    await page.goto(`${t.url}/operator/messages`);
    await visible(page.getByText(`Please withdraw ${id}, we no longer need it.`));
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/messages-mobile-${store}.png`, fullPage: true });
    await page.goto(`${t.url}/operator/stats`);
    await visible(page.getByText('Open queue'));
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/stats-mobile-${store}.png`, fullPage: true });
    await page.context().close();
  });

  it('manages the blocklist and signs out', async () => {
    const page = await signedIn();
    await page.goto(`${t.url}/operator/blocklist`);
    await page.getByLabel('Kind').selectOption('domain');
    await page.getByLabel(/^Value/).fill('spam-agents.dev');
    await page.getByLabel(/^Reason/).fill('Bulk synthetic submissions');
    await page.getByRole('button', { name: 'Add to blocklist' }).click();
    expect(await textOf(page.getByRole('status'))).toContain('Added to the blocklist');
    await visible(page.getByRole('cell', { name: 'spam-agents.dev' }));
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/blocklist-${store}.png`, fullPage: true });
    await page.getByRole('button', { name: 'Remove' }).click();
    expect(await textOf(page.getByRole('status'))).toContain('Removed from the blocklist');
    await page.goto(`${t.url}/operator/outbox`);
    await visible(page.getByRole('heading', { name: 'Outbox' }));
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/outbox-${store}.png`, fullPage: true });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.url}/operator/login`);
    expect(await page.context().cookies()).toHaveLength(0);
    await page.context().close();
  });

  it('highlights overdue ETAs and flags unverified e-mail in the queue', async () => {
    const late = await submit(t, { description: 'Photograph the opening hours sign of the pharmacy on Elm Street.' });
    await patchOk(t, late, { status: 'accepted', eta: new Date(clock.now().getTime() + 3600_000).toISOString() });
    const unverified = await submit(t, { description: 'Ask the library whether it lends e-readers to visitors.' });
    await t.store.db.updateTable('tasks').set({ email_unverified: 1 }).where('id', '=', unverified).execute();
    const real = clock.now();
    clock.advance(3 * 3600_000);
    try {
      const { cookie } = await signIn(t);
      const page = await (await fetch(`${t.url}/operator`, { headers: { cookie } })).text();
      expect(page).toContain(`<a class="item overdue" href="/operator/tasks/${late}">`);
      expect(page).toContain('Overdue: ETA was 2 h ago');
      expect(page).toContain('1 overdue');
      const card = page.slice(page.indexOf(`href="/operator/tasks/${unverified}"`));
      expect(card.slice(0, card.indexOf('</a>'))).toContain('Address not checked');
      const detail = await (await fetch(`${t.url}/operator/tasks/${late}`, { headers: { cookie } })).text();
      expect(detail).toContain('<span class="badge danger">Overdue</span>');
    } finally {
      clock.set(real);
    }
  });
});
