import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.js';

/**
 * Both clients install into an empty project outside the repository from the files
 * `npm run clients:pack` makes, with no registry and no package index (issue 51, item 5), using
 * the lines docs/clients.md gives; each then submits and reads a task against the real service.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'dist/clients');
const dirs: string[] = [];

/** No proxy or index reachable: any attempt to use the network fails at once instead of waiting. */
const OFFLINE = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  http_proxy: 'http://127.0.0.1:9',
  https_proxy: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  HTTPS_PROXY: 'http://127.0.0.1:9',
  NO_PROXY: '127.0.0.1,localhost',
  no_proxy: '127.0.0.1,localhost',
  npm_config_registry: 'http://127.0.0.1:9/',
  // pip's configuration files (indexes, find-links) are ignored: only what the command line names.
  PIP_CONFIG_FILE: '/dev/null',
};

function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, timeout: 180_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${command} ${args.join(' ')}: ${String(error)}\n${stdout}\n${stderr}`)) : resolve(stdout),
    );
  });
}

function emptyProject(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  await run('npm', ['run', '-s', 'clients:pack'], ROOT);
}, 180_000);
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('installing the clients in another project, offline', () => {
  const t = useTestApp();

  it('the TypeScript client: npm install --offline <tarball>, with an empty npm cache, then a submission', async () => {
    const tarball = readdirSync(OUT).find((name) => name.endsWith('.tgz'));
    expect(tarball).toMatch(/^human-task-client-\d+\.\d+\.\d+\.tgz$/);
    const project = emptyProject('htc-consumer-');
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'my-agent', private: true, type: 'module' }));
    const cache = emptyProject('htc-npm-cache-');
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--cache', cache, path.join(OUT, tarball as string)], project, OFFLINE);
    writeFileSync(
      path.join(project, 'agent.mjs'),
      `import { HumanTaskClient } from 'human-task-client';
const client = new HumanTaskClient({ baseUrl: process.argv[2] });
const submitted = await client.submitTask({ task_type: 'real_world_verification', delivery: 'status_poll',
  description: 'Check whether the bakery at 12 Main Street is open on Sunday mornings.' });
const task = await client.getTask(submitted.task_id);
console.log(task.status);
`,
    );
    expect((await run(process.execPath, ['agent.mjs', t.url], project, OFFLINE)).trim()).toBe('submitted');
    // The CLI comes with it.
    expect(await run(path.join(project, 'node_modules/.bin/htask'), ['--help'], project, OFFLINE)).toContain('htask');
  }, 180_000);

  it('the Python client: a venv and pip install --no-index --find-links <wheelhouse> <wheel>, then a submission', async () => {
    const wheel = readdirSync(OUT).find((name) => name.endsWith('.whl'));
    expect(wheel).toMatch(/^human_task_client-\d+\.\d+\.\d+-py3-none-any\.whl$/);
    const project = emptyProject('htc-py-consumer-');
    await run('python3', ['-m', 'venv', path.join(project, '.venv')], project, OFFLINE);
    const python = path.join(project, '.venv/bin/python');
    await run(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--no-index',
        '--find-links',
        path.join(OUT, 'wheelhouse'),
        path.join(OUT, wheel as string),
      ],
      project,
      OFFLINE,
    );
    writeFileSync(
      path.join(project, 'agent.py'),
      `import sys
from human_task_client import HumanTaskClient

with HumanTaskClient(sys.argv[1]) as client:
    submitted = client.submit_task({"task_type": "real_world_verification", "delivery": "status_poll",
                                    "description": "Check whether the pharmacy at 3 Elm Street is open on Sunday mornings."})
    print(client.get_task(submitted.task_id).status)
`,
    );
    expect((await run(python, ['agent.py', t.url], project, OFFLINE)).trim()).toBe('submitted');
  }, 180_000);
});
