import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.js';

/**
 * docs/mcp.md's 2026-07-28 client (issue 51, item 6) is docs/examples/mcp-tasks-2026.ts, word for
 * word, a file `npm run typecheck` and Biome check; here it runs as written against the real
 * service, whose stand-in operator asks a question and then delivers.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const EXAMPLE = 'docs/examples/mcp-tasks-2026.ts';

function runExample(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(path.join(ROOT, 'node_modules/.bin/tsx'), [EXAMPLE, url], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${String(error)}\n${stdout}\n${stderr}`)) : resolve(stdout),
    );
  });
}

describe('the 2026-07-28 client in docs/mcp.md', () => {
  const t = useTestApp({
    background: true,
    env: { DEV_MODE: 'true', BASE_URL: 'http://localhost:8080', DEV_AUTO_OPERATOR: 'ask', DEV_AUTO_OPERATOR_DELAY_MS: '0' },
  });

  it('is the example file, word for word', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/mcp.md'), 'utf8');
    const example = readFileSync(path.join(ROOT, EXAMPLE), 'utf8');
    expect(doc).toContain(`\`\`\`ts\n${example}\`\`\``);
  });

  it('submits, answers the operator’s question, and ends with the delivered result', async () => {
    const output = await runExample(`${t.url}/mcp`);
    expect(output).toMatch(/^task task-\d{4}-[0-9a-f]{32}$/m);
    expect(output).toContain('the operator asks: The development stand-in operator asks');
    expect(output).toMatch(/^status input_required$/m);
    expect(output).toMatch(/^delivered: Delivered by the development stand-in operator/m);
  }, 90_000);
});
