import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const CHECK = path.join(root, 'scripts', 'check-comment-paths.mjs');

/**
 * `npm run lint` runs scripts/check-comment-paths.mjs: a comment that names a repository path
 * that does not exist fails it. Each case checks a small tree and reads the verdict.
 */
describe('the comment-path check of npm run lint', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function check(files: Record<string, string>): Promise<{ code: number; output: string }> {
    const dir = mkdtempSync(path.join(tmpdir(), 'comment-paths-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    try {
      const { stdout, stderr } = await run(process.execPath, [CHECK, dir]);
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, output: failed.stdout + failed.stderr };
    }
  }

  const tree = {
    'docs/inbox.md': '# Inbox\n',
    'src/mail/outbox.ts': 'export const x = 1;\n',
    'src/services/delivery/mail-worker.ts': 'export const y = 2;\n',
  };

  it('fails on a comment naming a file that moved away, with the file, line and path', async () => {
    const result = await check({
      ...tree,
      'src/services/delivery/webhooks.ts': '/**\n * Delivered by webhooks/worker.ts.\n */\nexport const z = 3;\n',
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain('src/services/delivery/webhooks.ts:2: the comment names webhooks/worker.ts, which does not exist');
  });

  it('fails on a line comment naming a missing document', async () => {
    const result = await check({ ...tree, 'src/services/x.ts': '// See docs/outbox.md.\nexport const z = 3;\n' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('docs/outbox.md');
  });

  it('passes paths from the root, from src/ and from a folder above the file; ignores strings, URLs and dist/', async () => {
    const result = await check({
      ...tree,
      'src/services/delivery/webhooks.ts': [
        '/** Like services/delivery/mail-worker.ts and src/mail/outbox.ts (docs/inbox.md; delivery/mail-worker.ts). */',
        "export const url = 'https://example.com/a/b.md'; // https://example.com/c/d.ts",
        "export const file = 'not/a/comment.ts';",
        '// The bundle is dist/server.mjs.',
        '',
      ].join('\n'),
    });
    expect(result).toEqual({ code: 0, output: '' });
  });
});
