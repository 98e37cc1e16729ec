import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const biome = path.join(root, 'node_modules', '.bin', 'biome');

/**
 * The import-boundary rule is only worth having if an upward import fails the lint: each case
 * lints a small tree with the project's own biome.json and checks the verdict.
 */
describe('the layer rule in biome.json', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function lint(files: Record<string, string>): Promise<{ code: number; output: string }> {
    const dir = mkdtempSync(path.join(tmpdir(), 'lint-fixture-'));
    dirs.push(dir);
    const config = JSON.parse(readFileSync(path.join(root, 'biome.json'), 'utf8')) as Record<string, unknown>;
    delete config.$schema;
    config.vcs = { enabled: false };
    writeFileSync(path.join(dir, 'biome.json'), JSON.stringify(config));
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    try {
      const { stdout, stderr } = await run(biome, ['lint', '--max-diagnostics=50', 'src'], { cwd: dir });
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, output: failed.stdout + failed.stderr };
    }
  }

  const upward: [string, string][] = [
    ['src/domain/rule.ts', "import { x } from '../docs/x.js';\nexport const y = x;\n"],
    ['src/store/repo.ts', "import { x } from '../services/x.js';\nexport const y = x;\n"],
    ['src/mail/worker.ts', "import type { X } from '../services/x.js';\nexport const y: X = 1;\n"],
    ['src/services/tasks.ts', "import { x } from '../http/x.js';\nexport const y = x;\n"],
    ['src/http/routes/public.ts', "import { x } from '../../deps.js';\nexport const y = x;\n"],
  ];

  it.each(upward)('fails on an upward import in %s', async (file, text) => {
    const result = await lint({ [file]: text });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('Layer order');
  });

  it('passes imports that go down the layers', async () => {
    const result = await lint({
      'src/domain/ids.ts': 'export const x = 1;\n',
      'src/store/tasks-repo.ts': "import { x } from '../domain/ids.js';\nexport const y = x;\n",
      'src/services/tasks.ts': "import { y } from '../store/tasks-repo.js';\nexport const z = y;\n",
      'src/http/routes/public.ts': "import { z } from '../../services/tasks.js';\nexport const w = z;\n",
    });
    expect(result.output).not.toContain('Layer order');
    expect(result.code).toBe(0);
  });

  it('fails on console in src', async () => {
    const result = await lint({ 'src/services/log.ts': "export function f(): void {\n  console.log('x');\n}\n" });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('noConsole');
  });
});
