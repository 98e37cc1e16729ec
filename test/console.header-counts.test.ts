import { describe, expect, it } from 'vitest';
import { signIn } from './console.support.js';
import { submit } from './operator.support.js';
import { postJson, STORES, useTestApp } from './support/app.js';

/**
 * A console page reads its header's counts (new tasks, waiting messages) once, and a page that
 * shows the waiting total too takes it from them (web/operator/console-kit.ts headerCounts): each
 * read is a wait for the store, which under load is a turn of a busy event loop
 * (docs/performance.md, "Submissions wait their turn").
 */
describe.each(STORES)('console header counts (%s)', (store) => {
  const statements: string[] = [];
  let capturing = false;
  const t = useTestApp({
    store,
    onQuery: (query) => {
      if (capturing) statements.push(query.sql);
    },
  });

  it('the queue and the messages page read the waiting total and the unseen count once each', async () => {
    await submit(t);
    expect((await postJson(`${t.url}/api/v1/messages`, { message: 'A question about your services, in general.', reply_to: 'agent@mail.dev' })).status).toBe(
      201,
    );
    const { cookie } = await signIn(t);
    for (const path of ['/operator', '/operator/messages']) {
      statements.length = 0;
      capturing = true;
      const page = await fetch(`${t.url}${path}`, { headers: { cookie } });
      const html = await page.text();
      capturing = false;
      expect(page.status, path).toBe(200);
      // The waiting message is counted in the header.
      expect(html, path).toContain('<span class="count" aria-label="1 waiting">1</span>');
      const waitingReads = statements.filter((sql) => sql.includes('"message_counts"'));
      const unseenReads = statements.filter((sql) => sql.includes('"task_counts"') && sql.includes('"status" = '));
      expect(waitingReads, path).toHaveLength(1);
      expect(unseenReads, path).toHaveLength(1);
    }
  });
});
