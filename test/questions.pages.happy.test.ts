import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { type Json, submit, taskIn } from './operator.support.js';
import { answer, ask, publicTask } from './questions.support.js';
import { STORES, TEST_ADMIN_KEY, TestClock, useSuiteResource, useTestApp } from './support/app.js';
import { launchBrowser } from './support/browser.js';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: { id: string; impact: string }[] }> } }).axe;
    return axe.run(document);
  });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact})`);
}

describe.each(STORES)('questions on the status page and in the console on %s', (store) => {
  // A clock near real time: the console's live script and the browser compare times.
  const t = useTestApp({ store, clock: new TestClock(new Date()) });
  const browser = useSuiteResource<Browser>(launchBrowser, (b) => b.close());

  it('the status page shows the question with an answer form that works without JavaScript', async () => {
    const id = await taskIn(t, 'accepted');
    const asked = await ask(t, id, 'Is the back door fine for the delivery?');
    const page = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(page).toContain('The operator has a question for you');
    expect(page).toContain('Is the back door fine for the delivery?');
    expect(page).toContain('action="/tasks/answer"');
    expect(page).toContain(`name="question_id" value="${asked.question_id}"`);
    const sent = await postForm(t, '/tasks/answer', { task_id: id, question_id: asked.question_id, answer: 'Yes, the back door.' });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`/tasks?id=${id}&answered=${asked.question_id}#${asked.question_id}`);
    const after = await (await fetch(`${t.url}${sent.headers.get('location')}`)).text();
    expect(after).toContain('Your answer reached the operator');
    expect(after).toContain('Yes, the back door.');
    expect(after).not.toContain('action="/tasks/answer"');
    expect(((await publicTask(t, id)).questions as Json[])[0]!.answer).toBe('Yes, the back door.');
  });

  it('a refused answer comes back beside its field; an answered question says so', async () => {
    const id = await submit(t);
    const asked = await ask(t, id);
    const empty = await postForm(t, '/tasks/answer', { task_id: id, question_id: asked.question_id, answer: '   ' });
    expect(empty.status).toBe(422);
    const page = await empty.text();
    expect(page).toContain('aria-invalid="true"');
    expect(page).toMatch(/The answer must be between 1 and 5000 characters/);
    await answer(t, id, asked.question_id);
    const again = await postForm(t, '/tasks/answer', { task_id: id, question_id: asked.question_id, answer: 'Another one' });
    expect(again.status).toBe(409);
    const unknownTask = await postForm(t, '/tasks/answer', {
      task_id: 'task-2030-00000000000000000000000000000000',
      question_id: asked.question_id,
      answer: 'x',
    });
    expect(unknownTask.status).toBe(404);
  });

  it('phone 390×844 without JavaScript: answering through the form, no serious axe violation', async () => {
    const id = await submit(t);
    await ask(t, id, 'Should the photos include the street sign?');
    const context = await browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    await page.goto(`${t.url}/tasks?id=${id}`);
    await page.getByLabel('Your answer').fill('Yes, with the street sign.');
    await page.getByRole('button', { name: 'Send the answer' }).click();
    await page.getByText('Your answer reached the operator').waitFor({ state: 'visible', timeout: 5_000 });
    expect(await page.getByText('Yes, with the street sign.').count()).toBe(1);
    await context.close();
    // axe needs a script: a second context with JavaScript, on a page with an open question.
    const id2 = await submit(t);
    await ask(t, id2, 'Which side of the building?');
    const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const axePage = await axeContext.newPage();
    await axePage.goto(`${t.url}/tasks?id=${id2}`);
    expect(await seriousAxeViolations(axePage)).toEqual([]);
    const overflow = await axePage.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await axeContext.close();
  }, 60_000);

  it('the console asks from the task page, and shows the answer beside the question', async () => {
    const { cookie, csrf } = await signIn(t);
    const id = await taskIn(t, 'accepted');
    const before = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(before).toContain(`action="/operator/tasks/${id}/questions"`);
    const refused = await postForm(t, `/operator/tasks/${id}/questions`, { _csrf: csrf, question: 'Why' }, cookie);
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('Why</textarea>');
    const res = await postForm(t, `/operator/tasks/${id}/questions`, { _csrf: csrf, question: 'Front or back entrance?' }, cookie);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/operator/tasks/${id}?done=asked`);
    const task = await publicTask(t, id);
    expect(task.awaiting_answer).toBe(true);
    const [q] = task.questions as { question_id: string }[];
    await answer(t, id, q!.question_id, 'The back entrance.');
    const after = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(after).toContain('Front or back entrance?');
    expect(after).toContain('The requester answered');
    expect(after).toContain('The back entrance.');
  });

  it('the answer reaches an open console task page live, without reload', async () => {
    const id = await taskIn(t, 'accepted');
    const asked = await ask(t, id, 'Morning or afternoon visit?');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await page.goto(`${t.url}/operator/login`);
    await page.getByLabel('Operator key').fill(TEST_ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${t.url}/operator`);
    await page.goto(`${t.url}/operator/tasks/${id}`);
    await page.getByText('Morning or afternoon visit?').waitFor({ state: 'visible' });
    // Let the event stream connect before the change happens.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await answer(t, id, asked.question_id, 'Afternoon, after 14:00.');
    await page.getByText('Afternoon, after 14:00.').waitFor({ state: 'visible', timeout: 5_000 });
    await context.close();
  }, 60_000);
});
