import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DARK, LIGHT, openCard, openSilentHost, routeBaseUrl } from './mcp.apps.support.js';
import { call, type Json, useMcpClient } from './mcp.support.js';
import { patchOk } from './operator.support.js';
import { answer, ask, publicTask } from './questions.support.js';
import { TestClock, useTestApp, validTask } from './support/app.js';
import { useBrowser } from './support/browser.js';

/**
 * The task card's bad paths, in a host built on AppBridge (test/mcp.apps.support.ts): each ends
 * in a plain message in the card, never a stuck card.
 */

const BASE_URL = 'http://card.test';
type Card = { text: string; csp: { connectDomains: string[]; resourceDomains: string[] } };

describe('MCP Apps task card, bad paths', { timeout: 60_000 }, () => {
  const clock = new TestClock();
  const t = useTestApp({ store: 'sqlite', clock, env: { BASE_URL, ALLOWED_HOSTS: '127.0.0.1' } });
  const client = useMcpClient(t);
  const browser = useBrowser();

  async function readCard(): Promise<Card> {
    const doc = (await client.readResource({ uri: 'ui://human-task/task-card.html' })).contents[0] as unknown as {
      text: string;
      _meta: { ui: { csp: Card['csp'] } };
    };
    return { text: doc.text, csp: doc._meta.ui.csp };
  }
  async function page(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 360, height: 900 } });
    await routeBaseUrl(context, BASE_URL, t);
    return context.newPage();
  }
  async function acceptedWithQuestion(): Promise<{ id: string; questionId: string; checked: unknown }> {
    const submitted = await call(client, 'submit_human_task', validTask());
    const id = String(submitted.structuredContent.task_id);
    clock.advance(60_000);
    await patchOk(t, id, { status: 'accepted' });
    clock.advance(60_000);
    const asked = await ask(t, id);
    return { id, questionId: asked.question_id, checked: await call(client, 'check_task_status', { task_id: id }) };
  }

  it('refuses a too long answer in the card, sending nothing', async () => {
    const { id, checked } = await acceptedWithQuestion();
    const p = await page();
    const frame = await openCard(p, client, await readCard(), { task_id: id }, checked, LIGHT);
    await expect.poll(() => frame.locator('#question').isVisible(), { timeout: 10_000 }).toBe(true);
    await frame.locator('#answer').fill('x'.repeat(5001));
    await frame.locator('#answer-send').click();
    await expect.poll(() => frame.locator('#answer-error').textContent(), { timeout: 5_000 }).toBe('An answer is at most 5000 characters; this one has 5001.');
    expect(((await publicTask(t, id)).questions as Json[])[0]?.answer).toBeNull();
    await p.context().close();
  });

  it('says so when the question was answered meanwhile over REST, and shows the task as it is', async () => {
    const { id, questionId, checked } = await acceptedWithQuestion();
    const p = await page();
    const calls: string[] = [];
    const frame = await openCard(p, client, await readCard(), { task_id: id }, checked, LIGHT, calls);
    await expect.poll(() => frame.locator('#question').isVisible(), { timeout: 10_000 }).toBe(true);
    // Answered over REST without moving the clock: the card's wait does not see it.
    await answer(t, id, questionId, 'Over REST.');
    await frame.locator('#answer').fill('From the card.');
    await frame.locator('#answer-send').click();
    await expect
      .poll(() => frame.locator('#notice').textContent(), { timeout: 10_000 })
      .toBe('This question was already answered elsewhere; the card shows the latest.');
    await expect.poll(() => frame.locator('#question').isHidden(), { timeout: 10_000 }).toBe(true);
    expect(((await publicTask(t, id)).questions as Json[])[0]?.answer).toBe('Over REST.');
    await p.context().close();
  });

  it('says a task id does not exist, and stops', async () => {
    const missing = await call(client, 'check_task_status', { task_id: 'task-2030-00000000000000000000000000000000' });
    expect(missing.isError).toBe(true);
    const p = await page();
    const calls: string[] = [];
    const frame = await openCard(p, client, await readCard(), { task_id: 'task-2030-00000000000000000000000000000000' }, missing, LIGHT, calls);
    await expect.poll(() => frame.locator('#notice').textContent(), { timeout: 10_000 }).toBe('No task has this id: check the task_id the service returned.');
    expect(await frame.locator('#status').textContent()).toBe('Not found');
    expect(calls).toEqual([]);
    await p.context().close();
  });

  it('stops following a task that becomes final while it waits, and follows a theme change', async () => {
    const submitted = await call(client, 'submit_human_task', validTask());
    const id = String(submitted.structuredContent.task_id);
    const p = await page();
    const calls: string[] = [];
    const frame = await openCard(p, client, await readCard(), validTask(), submitted, LIGHT, calls);
    await expect.poll(() => frame.locator('#status').textContent(), { timeout: 10_000 }).toBe('Waiting for review');
    await p.evaluate((dark) => (window as unknown as { bridge: { setHostContext: (c: object) => void } }).bridge.setHostContext(dark), DARK);
    await expect.poll(() => frame.evaluate(() => document.documentElement.getAttribute('data-theme')), { timeout: 5_000 }).toBe('dark');
    clock.advance(60_000);
    await patchOk(t, id, { status: 'rejected', operator_notes: 'Outside the service area.' });
    await expect.poll(() => frame.locator('#status').textContent(), { timeout: 15_000 }).toBe('Declined');
    expect(await frame.locator('#facts dd').allTextContents()).toContain('Outside the service area.');
    const made = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(calls.length).toBe(made);
    await p.context().close();
  });

  it('says so, in plain words, when the host never answers', async () => {
    const p = await page();
    const frame = await openSilentHost(p, await readCard());
    await expect.poll(() => frame.locator('#status').textContent(), { timeout: 25_000 }).toBe('Not connected');
    expect(await frame.locator('#notice').textContent()).toContain('did not answer this card');
    await p.context().close();
  });
});
