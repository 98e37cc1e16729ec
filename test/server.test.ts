import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { freePort, waitForServer } from './support/net.js';

const ROOT = path.resolve(import.meta.dirname, '..');

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs the real entry point as `npm start` does: the bundle in dist/, built once for this file. */
function runServer(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--enable-source-maps', 'dist/server.mjs'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DNS_SERVERS: '127.0.0.1:9', DNS_TIMEOUT_MS: '200', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

beforeAll(() => {
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('configuration', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['BASE_URL', 'not a url'],
    ['SMTP_URL', 'http://mail'],
    ['TRUST_PROXY', '-1'],
    ['TASK_LIMIT_PER_HOUR', '0'],
    ['DNS_SERVERS', '1.2.3.4:53,nonsense'],
    ['OPERATOR_EMAIL', 'nobody'],
    ['LOG_LEVEL', 'loud'],
    ['ADMIN_KEY', 'short'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('has the contract defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.host).toBe('0.0.0.0');
    expect(config.baseUrl).toBe('http://localhost:8080');
    expect(config.databaseUrl).toBe(`sqlite:${path.resolve('data', 'service.db')}`);
    expect(config.mailFrom).toBe('no-reply@localhost');
    expect(config.trustProxy).toBe(0);
    expect(config.limits).toMatchObject({
      readsPerMinute: 600,
      dailyTaskCap: 300,
      dailyEmailCap: 200,
      tasksPerHour: 3,
      tasksPerDay: 5,
      messagesPerHour: 3,
      messagesPerDay: 5,
      statusPollPerDay: 1,
      maxBodyBytes: 65536,
    });
  });

  it('stops the process at start with a message naming the bad variable', async () => {
    const run = runServer({ PORT: 'eighty' });
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain('PORT');
  });
});

describe('the entry point', () => {
  it('serves on the embedded store, prints a generated key once, and drains on SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-server-'));
    dirs.push(dataDir);
    const port = await freePort();
    // LOG_LEVEL silent: the key is printed on stderr whatever the log level, and never logged.
    const env = { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' };

    // A first start that fails before listening (the port is taken) shows no key and keeps none.
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    const failed = runServer(env);
    expect(await failed.exited).toBe(1);
    expect(failed.stderr()).not.toMatch(/hts_admin_/);
    await new Promise<void>((resolve) => blocker.close(() => resolve()));

    const first = runServer(env);
    const health = await waitForServer(`http://127.0.0.1:${port}/api/v1/health`);
    expect(health.status).toBe(200);
    expect(existsSync(path.join(dataDir, 'service.db'))).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    // One plain line says where everything is (issue 30, item 8), whatever LOG_LEVEL is.
    const base = `http://localhost:${port}`;
    expect(first.stderr()).toContain(
      `Ready: console ${base}/operator · API ${base}/api/v1 · MCP ${base}/mcp · documents ${base}/llms.txt and ${base}/openapi.json`,
    );
    const key = /Generated the operator key[^\n]*\n\n {2}(hts_admin_[\w-]+)/.exec(first.stderr())?.[1];
    expect(key).toBeDefined();
    expect(first.stdout()).not.toContain(String(key));
    const admin = await fetch(`http://127.0.0.1:${port}/api/v1/admin/stats`, { headers: { authorization: `Bearer ${String(key)}` } });
    expect(admin.status).toBe(200);
    // The bundle serves the pages' stylesheet and script, copied beside it by the build (issue 31).
    const home = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' } })).text();
    const assets = [...home.matchAll(/(?:href|src)="(\/assets\/pages\.[0-9a-f]{12}\.(?:css|js))"/g)].map((m) => m[1]);
    expect(assets).toHaveLength(2);
    for (const asset of assets) expect((await fetch(`http://127.0.0.1:${port}${asset}`)).status, asset).toBe(200);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = runServer(env);
    await waitForServer(`http://127.0.0.1:${port}/api/v1/health`);
    expect(second.stderr()).not.toMatch(/Generated the operator key/);
    expect(second.stdout()).not.toMatch(/hts_admin_/);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 60_000);
});
