import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.js';

/** llms.txt and /docs point agent developers to the client libraries (issue 18). */

describe('client libraries in the documents', () => {
  const t = useTestApp();

  it('llms.txt has a Clients section naming both packages and the CLI', async () => {
    const text = await (await fetch(`${t.url}/llms.txt`)).text();
    const section = text.slice(text.indexOf('## Clients'), text.indexOf('## Optional'));
    expect(section).toContain('- TypeScript: `human-task-client` (`clients/typescript/`');
    expect(section).toContain('`htask` CLI');
    expect(section).toContain('- Python: `human-task-client` (`clients/python/`');
    expect(section).toContain('human_task_client');
  });

  it('the /docs page lists them', async () => {
    const page = await (await fetch(`${t.url}/docs`)).text();
    expect(page).toContain('<h2>Client libraries</h2>');
    expect(page).toContain('<code>clients/typescript/</code>');
    expect(page).toContain('<code>clients/python/</code>');
    expect(page).toContain('htask CLI');
  });
});
