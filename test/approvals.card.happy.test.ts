import { describe, expect, it } from 'vitest';
import { LIGHT, openCard, routeBaseUrl } from './mcp.apps.support.js';
import { call, useMcpClient } from './mcp.support.js';
import { useTestApp, validTask } from './support/app.js';
import { useBrowser } from './support/browser.js';
import { api, json, newOperator } from './team.support.js';

/** The MCP App task card of a task needing several approvals (docs/approvals.md): "2 of 3 approvals", in a host (AppBridge, Chromium). */
describe('approvals on the MCP App card', { timeout: 60_000 }, () => {
  const BASE_URL = 'http://card.test';
  const t = useTestApp({ store: 'sqlite', env: { BASE_URL, ALLOWED_HOSTS: '127.0.0.1' } });
  const client = useMcpClient(t);
  const browser = useBrowser();

  it('submits approvals over MCP and shows where the approvals stand', async () => {
    const read = await client.readResource({ uri: 'ui://human-task/task-card.html' });
    const doc = read.contents[0] as unknown as { text: string; _meta: { ui: { csp: { connectDomains: string[]; resourceDomains: string[] } } } };
    const card = { text: doc.text, csp: doc._meta.ui.csp };
    const input = validTask({ approvals: 3 });
    const submitted = await call(client, 'submit_human_task', input);
    expect(submitted.isError).toBeFalsy();
    const id = String(submitted.structuredContent.task_id);
    const [a, b] = [await newOperator(t), await newOperator(t)];
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }, a.auth), 200);
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'delivered', operator_notes: 'Open 8 to 12.' }, a.auth), 200);
    await json(await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve' }, b.auth), 200);
    // MCP's structuredContent carries the public task's approvals.
    const status = await call(client, 'check_task_status', { task_id: id });
    expect(status.structuredContent.approvals).toEqual({ required: 3, given: 2 });

    const context = await browser.newContext({ viewport: { width: 360, height: 900 } });
    try {
      await routeBaseUrl(context, BASE_URL, t);
      const frame = await openCard(await context.newPage(), client, card, input, submitted, LIGHT);
      await expect.poll(() => frame.locator('#facts').textContent(), { timeout: 10_000 }).toContain('2 of 3 approvals');
      expect(await frame.locator('#status').textContent()).toBe('Accepted — being worked on');
    } finally {
      await context.close();
    }
  });
});
