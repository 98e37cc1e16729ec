import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitForServer } from './support/net.js';

const ROOT = path.resolve(import.meta.dirname, '..');
// A bundle of its own (server.test.ts builds dist/server.mjs at the same time); under dist/ so
// the bundle's package imports resolve from the project's node_modules.
const BUNDLE = path.join(ROOT, 'dist', 'longpoll-shutdown', 'server.mjs');

beforeAll(() => {
  execFileSync(
    path.join(ROOT, 'node_modules', '.bin', 'esbuild'),
    ['src/server.ts', '--bundle', '--platform=node', '--format=esm', '--packages=external', `--outfile=${BUNDLE}`, '--log-level=warning'],
    { cwd: ROOT, stdio: 'inherit' },
  );
  // The stylesheets and scripts, and the MCP App card's parts, are files read at start from assets/
  // and apps/ next to the bundle, as scripts/build.mjs copies them beside dist/server.mjs.
  cpSync(path.join(ROOT, 'src', 'web', 'assets'), path.join(path.dirname(BUNDLE), 'assets'), { recursive: true });
  cpSync(path.join(ROOT, 'src', 'mcp', 'apps'), path.join(path.dirname(BUNDLE), 'apps'), { recursive: true });
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the entry point with held long-polls', () => {
  it('answers every held request 304 on SIGTERM, then exits 0', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-longpoll-'));
    dirs.push(dataDir);
    const port = await freePort();
    const child = spawn(process.execPath, [BUNDLE], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        ADMIN_KEY: 'shutdown-test-admin-key-0123',
        LOG_LEVEL: 'warn',
        DNS_SERVERS: '127.0.0.1:9',
        DNS_TIMEOUT_MS: '200',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForServer(`${base}/api/v1/health`);
      const created = await fetch(`${base}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task_type: 'data_collection', description: 'Count the benches in the park, for the shutdown test.', delivery: 'status_poll' }),
      });
      expect(created.status).toBe(202);
      const { task_id } = (await created.json()) as { task_id: string };
      const first = await fetch(`${base}/api/v1/tasks/${task_id}`);
      const etag = first.headers.get('etag') ?? '';
      await first.arrayBuffer();
      const held = Array.from({ length: 5 }, () => fetch(`${base}/api/v1/tasks/${task_id}`, { headers: { 'if-none-match': etag, prefer: 'wait=60' } }));
      await new Promise((r) => setTimeout(r, 1000));
      const started = Date.now();
      child.kill('SIGTERM');
      const answers = await Promise.all(held);
      expect(answers.map((res) => res.status)).toEqual([304, 304, 304, 304, 304]);
      expect(answers.every((res) => res.headers.get('preference-applied') === 'wait=60')).toBe(true);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});
