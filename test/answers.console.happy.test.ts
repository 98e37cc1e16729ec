import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { type Json, patchOk, submit } from './operator.support.js';
import { TEST_ADMIN_KEY, useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** A nested schema exercising every kind of field the form makes. */
const SCHEMA = {
  type: 'object',
  title: 'Shop check',
  properties: {
    open_on_sundays: { type: 'boolean', title: 'Open on Sundays?' },
    checked_on: { type: 'string', format: 'date', title: 'Checked on', description: 'The day you looked.' },
    how_checked: { type: 'string', enum: ['in_person', 'phone', 'sign_on_door'], title: 'How it was checked' },
    rating: { type: 'integer', minimum: 1, maximum: 5, default: 3, title: 'Friendliness' },
    seen_at: { type: 'string', format: 'date-time', title: 'Seen at' },
    hours: { type: 'array', title: 'Opening hours', items: { $ref: '#/$defs/opening' } },
    contact: {
      title: 'Contact',
      oneOf: [
        {
          title: 'Phone',
          type: 'object',
          properties: { phone: { type: 'string', maxLength: 40, title: 'Phone number' } },
          required: ['phone'],
          additionalProperties: false,
        },
        { title: 'No contact', type: 'object', properties: { reason: { type: 'string', maxLength: 100, title: 'Why not' } }, additionalProperties: false },
      ],
    },
  },
  required: ['open_on_sundays', 'checked_on', 'how_checked', 'hours', 'contact'],
  additionalProperties: false,
  $defs: {
    opening: {
      type: 'object',
      properties: {
        day: { type: 'string', enum: ['saturday', 'sunday'], title: 'Day' },
        opens: { type: 'string', minLength: 5, maxLength: 5, title: 'Opens' },
        closes: { type: 'string', minLength: 5, maxLength: 5, title: 'Closes' },
      },
      required: ['day', 'opens', 'closes'],
    },
  },
};

/**
 * axe needs a script, and the page under test runs without one: the same HTML (the server's answer
 * to a posted form) is written into a scripted page of the same origin, with the same stylesheets.
 */
async function axeViolations(source: Page, scripted: Page): Promise<string[]> {
  const markup = await source.content();
  await scripted.goto(new URL('/operator/login', source.url()).href);
  await scripted.setContent(markup, { waitUntil: 'load' });
  const page = scripted;
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }
    ).axe;
    return axe.run(document);
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function noSidewaysScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(scrollWidth, page.url()).toBeLessThanOrEqual(clientWidth);
}

describe('the structured answer form in Chromium, without JavaScript', () => {
  const t = useTestApp({ store: 'sqlite' });
  const browser = useBrowser();

  for (const viewport of [
    { width: 390, height: 844 },
    { width: 1366, height: 900 },
  ]) {
    it(`${viewport.width}×${viewport.height}: field errors from the server, rows, a choice, then a delivered result shown as a table`, {
      timeout: 120_000,
    }, async () => {
      const id = await submit(t, { response_schema: SCHEMA, delivery: 'status_poll', contact_email: undefined });
      // bypassCSP only so axe-core can be injected; no script of the page runs.
      const ctx = await browser.newContext({
        viewport,
        javaScriptEnabled: false,
        bypassCSP: true,
        ...(viewport.width < 500 ? { isMobile: true, hasTouch: true } : {}),
      });
      const page = await ctx.newPage();
      const scriptedCtx = await browser.newContext({ viewport, bypassCSP: true });
      const scripted = await scriptedCtx.newPage();
      await page.goto(`${t.url}/operator/login`);
      await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.goto(`${t.url}/operator/tasks/${id}`);

      // Before accepting, the review card shows what the answer must hold (issue 51): each field's
      // title, kind and whether it is required, not only "Structured answer (JSON)".
      const outline = await page.locator('#act').locator('..').locator('.schema-outline').innerText();
      for (const line of [
        'Open on Sundays? — yes/no, required',
        'Checked on — date, required',
        'The day you looked.',
        'How it was checked — one of: in_person, phone, sign_on_door, required',
        'Friendliness — whole number from 1 to 5, optional',
        'Seen at — date and time, optional',
        'Opening hours — list of entries with these fields, required',
        'Day — one of: saturday, sunday, required',
        'Contact — one of 2 kinds: Phone, No contact, required',
      ]) {
        expect(outline).toContain(line);
      }
      expect(await page.locator('.kv').first().innerText()).not.toContain('structured_json');
      expect(await axeViolations(page, scripted)).toEqual([]);
      await noSidewaysScroll(page);
      await patchOk(t, id, { status: 'accepted' });
      await page.goto(`${t.url}/operator/tasks/${id}`);

      // The default is pre-filled; an empty form checked by the server names each field beside it.
      await expect.poll(() => page.getByLabel('Friendliness').inputValue()).toBe('3');
      // A required boolean is a Yes/No choice with nothing chosen: left alone, it is missing (issue 51).
      const sundays = page.getByRole('group', { name: 'Open on Sundays? (required)' });
      expect(await sundays.locator('legend').innerText()).toBe('Open on Sundays? (required)');
      expect(await sundays.getByRole('radio', { name: 'Yes' }).isChecked()).toBe(false);
      expect(await sundays.getByRole('radio', { name: 'No' }).isChecked()).toBe(false);
      expect(await page.locator('input[type=checkbox][name^="r/"]').count()).toBe(0);
      await page.getByRole('button', { name: 'Check answers', exact: true }).last().click();
      await expect.poll(() => page.locator('#f_2fchecked_on-error').textContent()).toBe('is required');
      expect(await page.locator('#f_2fopen_on_sundays-error').textContent()).toBe('is required');
      expect(await page.getByLabel('Checked on').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#f_2fhow_checked-error').textContent()).toBe('is required');
      expect(await axeViolations(page, scripted)).toEqual([]);
      await noSidewaysScroll(page);

      // Keyboard: Enter in a field checks the answers (it never removes a row).
      await page.getByLabel('Checked on').fill('2030-03-10');
      await page.getByLabel('Checked on').press('Enter');
      await page.waitForLoadState();
      expect(await page.locator('#f_2fchecked_on-error').count()).toBe(0);
      expect(await page.getByLabel('Checked on').inputValue()).toBe('2030-03-10');

      await page.getByRole('group', { name: 'Open on Sundays? (required)' }).getByRole('radio', { name: 'Yes' }).check();
      await page.getByLabel('How it was checked').selectOption({ label: 'sign_on_door' });
      await page.getByLabel('Seen at').fill('2030-03-10T09:30');
      await page.getByRole('button', { name: 'Add Opening hours' }).click();
      await page.getByLabel(/^Day/).selectOption({ label: 'sunday' });
      await page.getByLabel('Opens').fill('08:00');
      await page.getByLabel('Closes').fill('13:0');
      // The oneOf is a choice: switching it shows the other alternative's fields (posted, no script).
      expect(await page.getByLabel('Phone number').count()).toBe(1);
      await page.getByLabel('Kind of answer').selectOption({ label: 'No contact' });
      await page.getByRole('button', { name: 'Show its fields' }).click();
      expect(await page.getByLabel('Phone number').count()).toBe(0);
      await page.getByLabel('Why not').fill('Nobody answers the phone');
      // A wrong value after rows and choices: the server answers with the error next to the row's field.
      await page.getByRole('button', { name: 'Deliver & sign receipt', exact: true }).click();
      await expect.poll(() => page.locator('#f_2fhours_2f0_2fcloses-error').textContent()).toContain('fewer than 5 characters');
      expect(await page.getByLabel('Opens').inputValue()).toBe('08:00');
      await noSidewaysScroll(page);
      expect(await axeViolations(page, scripted)).toEqual([]);

      await page.getByLabel('Closes').fill('13:00');
      await page.getByRole('button', { name: 'Deliver & sign receipt', exact: true }).click();
      await page.getByRole('button', { name: 'Confirm: deliver & sign receipt' }).click();
      await page.waitForURL(/done=delivered/);
      expect(await page.locator('.result-table').count()).toBeGreaterThan(0);

      const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
      expect(task.result).toEqual({
        open_on_sundays: true,
        checked_on: '2030-03-10',
        how_checked: 'sign_on_door',
        rating: 3,
        seen_at: '2030-03-10T09:30:00Z',
        hours: [{ day: 'sunday', opens: '08:00', closes: '13:00' }],
        contact: { reason: 'Nobody answers the phone' },
      });

      // The requester's status page: a readable table, not raw JSON.
      await page.goto(`${t.url}/tasks?id=${id}`);
      // Named by the schema's titles, as the console's form names them; no estimate once delivered;
      // the result format in words (issue 51).
      const names = await page.locator('.result-table th').allInnerTexts();
      expect(names).toEqual(expect.arrayContaining(['Open on Sundays?', 'Checked on', 'How it was checked', 'Opening hours', 'Day', 'Contact', 'Why not']));
      expect(names).not.toContain('open_on_sundays');
      const facts = await page.locator('section[aria-labelledby="details-heading"] .facts').innerText();
      expect(facts).not.toContain('Estimated delivery');
      expect(facts).toContain('Structured answer (JSON)');
      expect(facts).not.toContain('structured_json');
      expect(await page.locator('.result-table td', { hasText: 'Yes' }).count()).toBeGreaterThan(0);
      expect(await page.content()).not.toContain('{&quot;');
      await noSidewaysScroll(page);
      expect(await axeViolations(page, scripted)).toEqual([]);
      await ctx.close();
      await scriptedCtx.close();
    });
  }
});
