/**
 * The MCP Apps task card's render budget (docs/mcp-apps.md; `npm run bench:mcp-app`, never in
 * timed tests): the card shows its first state within 300 ms of the host handing it the tool
 * result, in headless Chromium, rendered by the package's own AppBridge (test/mcp.apps.support.ts).
 * Measured from the host's sendToolResult to the frame's status text (epoch milliseconds on both
 * sides), for a delivered task with a structured result and a photo: the median of RUNS.
 * Exits 1 over the budget.
 */
import { EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../src/domain/answers/answer-example.js';
import { pngImage, uploadOk } from '../test/attachments.support.js';
import { LIGHT, openCard, routeBaseUrl } from '../test/mcp.apps.support.js';
import { call, connectClient } from '../test/mcp.support.js';
import { patchOk } from '../test/operator.support.js';
import { startTestApp, validTask } from '../test/support/app.js';
import { launchBrowser } from '../test/support/browser.js';

const BUDGET_MS = 300;
const RUNS = Number(process.env.BENCH_CARD_RUNS ?? 10);
const BASE_URL = 'http://card.test';

async function main(): Promise<number> {
  const t = await startTestApp({ env: { BASE_URL, ALLOWED_HOSTS: '127.0.0.1' } });
  const client = await connectClient(t);
  const browser = await launchBrowser();
  try {
    const doc = (await client.readResource({ uri: 'ui://human-task/task-card.html' })).contents[0] as unknown as {
      text: string;
      _meta: { ui: { csp: { connectDomains: string[]; resourceDomains: string[] } } };
    };
    const card = { text: doc.text, csp: doc._meta.ui.csp };
    const submitted = await call(client, 'submit_human_task', validTask({ response_schema: EXAMPLE_RESPONSE_SCHEMA }));
    const id = String(submitted.structuredContent.task_id);
    await patchOk(t, id, { status: 'accepted' });
    await uploadOk(t, id, await pngImage(), { type: 'image/png', name: 'sign.png' });
    await patchOk(t, id, { status: 'delivered', result: EXAMPLE_RESULT });
    const checked = await call(client, 'check_task_status', { task_id: id });
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext({ viewport: { width: 360, height: 900 } });
      await routeBaseUrl(context, BASE_URL, t);
      const page = await context.newPage();
      const frame = await openCard(page, client, card, { task_id: id }, checked, LIGHT);
      const shown = await (
        await frame.waitForFunction(
          () => document.getElementById('status')?.textContent === 'Delivered' && performance.timeOrigin + performance.now(),
          undefined,
          {
            polling: 'raf',
          },
        )
      ).jsonValue();
      const sent = await page.evaluate(() => (window as unknown as { toolResultSentAt: number }).toolResultSentAt);
      times.push(Number(shown) - sent);
      await context.close();
    }
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    const ok = median <= BUDGET_MS;
    process.stdout.write(`task card first render: median ${median.toFixed(1)} ms over ${RUNS} runs (budget ${BUDGET_MS} ms) ${ok ? 'ok' : 'OVER'}\n`);
    return ok ? 0 : 1;
  } finally {
    await browser.close();
    await client.close();
    await t.close();
  }
}

process.exitCode = await main();
