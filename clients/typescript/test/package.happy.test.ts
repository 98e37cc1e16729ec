import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateTypes } from '../scripts/gen-types.js';

/** The package as npm would publish it: self-contained, its types current with the server's schemas. */

const CLIENT = fileURLToPath(new URL('..', import.meta.url));
const REPO = path.resolve(CLIENT, '../..');

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout: 120_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${String(error)}\n${stdout}\n${stderr}`)) : resolve(stdout),
    );
  });
}

describe('the TypeScript client package', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'htc-pack-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads by its package name straight after npm ci: the root prepare script builds dist/ (issue 30, item 3)', async () => {
    const root = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(root.scripts.prepare).toContain('clients/typescript/scripts/build.mjs');
    // Plain Node, no tsx, resolving the workspace link as an agent developer's script would. In CI
    // this runs on a fresh clone after npm ci, so dist/ exists only because prepare built it.
    const loaded = await run(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('human-task-client'); console.log(typeof m.HumanTaskClient)"],
      REPO,
    );
    expect(loaded.trim()).toBe('function');
  });

  it('carries types generated from the current server schemas (npm run clients:types)', async () => {
    const committed = readFileSync(path.join(CLIENT, 'src/api-types.ts'), 'utf8');
    expect(committed, 'clients/typescript/src/api-types.ts is out of date: run npm run clients:types').toBe(await generateTypes());
  });

  it('type-checks on its own once packed, outside the repository, with nothing of the server', async () => {
    const packed = JSON.parse(await run('npm', ['pack', '--json', '--pack-destination', dir], CLIENT)) as { filename: string; files: { path: string }[] }[];
    const tarball = packed[0]?.filename ?? '';
    const root = path.join(dir, 'consumer');
    mkdirSync(path.join(root, 'node_modules/@types'), { recursive: true });
    await run('tar', ['-xzf', path.join(dir, path.basename(tarball)), '-C', path.join(root, 'node_modules')], root);
    const pkg = path.join(root, 'node_modules/human-task-client');
    // npm unpacks into package/; that directory is the installed package.
    symlinkSync(path.join(root, 'node_modules/package'), pkg);
    // Node's types for the CLI, as the consumer's own install would provide them (the package has no dependency).
    symlinkSync(path.join(REPO, 'node_modules/@types/node'), path.join(root, 'node_modules/@types/node'));

    // Nothing in the package reaches outside it.
    const sources = readdirSync(path.join(pkg, 'src'));
    expect(sources).toContain('api-types.ts');
    for (const file of sources) expect(readFileSync(path.join(pkg, 'src', file), 'utf8'), file).not.toMatch(/from '\.\.\/\.\./);

    writeFileSync(
      path.join(root, 'use.ts'),
      `import { HumanTaskClient, type PublicTask, type ErrorCode, type Receipt } from 'human-task-client';
const client = new HumanTaskClient({ baseUrl: 'https://tasks.example-service.dev' });
const status: PublicTask['status'] = 'delivered';
const code: ErrorCode = 'rate_limited';
const version: Receipt['receipt_version'] = 2;
// @ts-expect-error: not a status of the API
const wrong: PublicTask['status'] = 'done';
export { client, status, code, version, wrong };
`,
    );
    writeFileSync(
      path.join(root, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['use.ts'],
      }),
    );
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    await run(path.join(REPO, 'node_modules/.bin/tsc'), ['-p', root], root);
  }, 120_000);
});
