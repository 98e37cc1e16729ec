import type { Browser, BrowserContext, Page } from 'playwright-core';
import { patchOk, submit } from './operator.support.js';
import { answer, ask } from './questions.support.js';
import { postJson, TEST_ADMIN_KEY, type TestApp } from './support/app.js';
import { seriousAxeViolations } from './support/axe.js';
import { waitUntil } from './support/smtp.js';

/**
 * The operator's inbox (issue 31): a console as the walk-through found it, 13 tasks in every state
 * and 4 messages, and the checks every console page passes on a phone and a desktop.
 */

const DESCRIPTIONS = [
  'Photograph the opening hours sign at the bakery on 12 Main Street',
  'Call the dentist on Elm Road and ask whether they take new patients',
  'Check that the parcel locker at the station accepts size L parcels',
  'Read the notice board at the town hall and copy the market dates',
  'Confirm the bike shop repairs e-bikes with Bosch motors this week',
  'Count the free parking spaces behind the library at noon',
  'Ask the pharmacy whether the flu vaccine is in stock',
  'Verify that the café on Oak Lane still offers oat milk',
  'Look whether the playground by the river has reopened after works',
  'Find out if the post office opens on Saturday afternoons',
  'Check the price of a day ticket at the swimming pool',
  'Photograph the menu board of the lunch place near the park',
  'Ask the hardware store whether they cut keys while you wait',
];

export interface Seeded {
  submitted: string;
  accepted: string;
  structured: string;
  delivered: string;
  rejected: string;
  answered: string;
  all: string[];
}

/** 13 tasks (submitted, accepted with a question answered, structured, delivered, rejected) and 4 messages. */
export async function seedConsole(t: TestApp): Promise<Seeded> {
  const all: string[] = [];
  const soon = new Date(t.clock.now().getTime() + 3 * 3_600_000).toISOString();
  for (const [i, description] of DESCRIPTIONS.entries()) {
    all.push(
      await submit(t, {
        description: `${description}.`,
        requester: i % 3 === 0 ? 'travel-agent' : 'shopping-bot',
        ...(i % 4 === 1 ? { deadline: soon } : {}),
        ...(i % 5 === 2 ? { delivery: 'status_poll', contact_email: undefined } : {}),
        ...(i === 6 ? { response_schema: { type: 'object', properties: { in_stock: { type: 'boolean' } }, required: ['in_stock'] } } : {}),
      }),
    );
  }
  const [submitted, accepted, , delivered, rejected, answered, structured] = all as [string, string, string, string, string, string, string];
  const eta = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
  for (const id of [accepted, delivered, answered, structured]) await patchOk(t, id, { status: 'accepted', eta });
  await patchOk(t, delivered, { status: 'delivered', operator_notes: 'The sign says: Sunday 8:00–12:00.' });
  await patchOk(t, rejected, { status: 'rejected', operator_notes: 'Out of scope.' });
  const question = await ask(t, answered);
  await answer(t, answered, question.question_id);
  for (const [message, extra] of [
    [`Please withdraw ${submitted}, it is no longer needed.`, { from: 'Travel agent', subject: 'Withdraw' }],
    [`Any news on ${accepted}? The client is waiting.`, { subject: 'Status?' }],
    [`One more thing about ${accepted}: use the side door.`, {}],
    ['Do you also take tasks in Shelbyville?', { subject: 'Coverage' }],
  ] as const) {
    const sent = await postJson(`${t.url}/api/v1/messages`, { message, reply_to: 'agent@mail.example-agent.dev', ...extra });
    if (sent.status !== 201) throw new Error(`message refused: ${sent.status}`);
  }
  return { submitted, accepted, structured, delivered, rejected, answered, all };
}

/** A signed-in browser context at a phone's or a desktop's size. bypassCSP only so axe can be injected. */
export async function consoleContext(browser: Browser, t: TestApp, phone: boolean): Promise<BrowserContext> {
  const ctx = await browser.newContext({
    bypassCSP: true,
    ...(phone ? { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : { viewport: { width: 1366, height: 900 } }),
  });
  const page = await ctx.newPage();
  await page.goto(`${t.url}/operator/login`);
  await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${t.url}/operator`);
  await page.close();
  return ctx;
}

/**
 * Every visible interactive element under 44×44 CSS px: links, buttons, summaries, inputs (an
 * input counts with its label, the larger of the two boxes). Links inside running text are exempt
 * (WCAG 2.5.8's inline exception).
 */
export async function smallTargets(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const small: string[] = [];
    const controls = document.querySelectorAll('a[href], button, summary, select, textarea, input:not([type=hidden])');
    for (const el of Array.from(controls) as HTMLElement[]) {
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none' || el.closest('[hidden]')) continue;
      // Not a target: taken out of the tab order and the accessibility tree (a form's default button).
      if (el.getAttribute('tabindex') === '-1' && el.getAttribute('aria-hidden') === 'true') continue;
      let box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      // Inside closed <details>: not shown.
      const details = el.closest('details');
      if (details && !details.open && el.tagName !== 'SUMMARY') continue;
      if (el.tagName === 'SUMMARY' && el.parentElement?.closest('details:not([open])')) continue;
      // A link within a sentence is exempt (WCAG 2.5.8's inline exception); one standing alone is not.
      if (el.tagName === 'A' && !el.matches('.btn, .chip, .item, .back')) {
        const block = el.parentElement?.closest('p, dd, td, h2, h3, .sub, .prose');
        if (block && (block.textContent ?? '').trim().length > (el.textContent ?? '').trim().length + 2) continue;
      }
      if (el.tagName === 'INPUT' || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA') {
        const label = el.closest('label') ?? (el.id ? document.querySelector(`label[for="${el.id}"]`) : null);
        const lbox = label?.getBoundingClientRect();
        if (lbox && lbox.width * lbox.height > box.width * box.height) box = lbox;
        // A visually hidden file input is operated through its label.
        if (style.opacity === '0' && label) box = label.getBoundingClientRect();
      }
      if (box.width < 43.5 || box.height < 43.5) {
        small.push(
          `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''} "${(el.textContent ?? el.getAttribute('value') ?? '').trim().slice(0, 30)}" ${Math.round(box.width)}×${Math.round(box.height)}`,
        );
      }
    }
    return small;
  });
}

export const axeViolations = seriousAxeViolations;

export async function sideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
}

/** Waits until no mail or webhook is waiting to go: what the requester will ever see has been sent. */
export async function outboxesDrained(app: TestApp): Promise<void> {
  await waitUntil(
    async () => {
      const mail = await app.store.db.selectFrom('outbox').select('id').where('status', '=', 'pending').execute();
      const hooks = await app.store.db.selectFrom('webhook_outbox').select('id').where('status', '=', 'pending').execute();
      return mail.length === 0 && hooks.length === 0;
    },
    10_000,
    'the outbox to drain',
  );
}
