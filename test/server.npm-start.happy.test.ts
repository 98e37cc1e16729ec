import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './support/net.js';

/**
 * The README's start commands stop with `kill $!` (issue 51, item 2): the PID a shell's `$!`
 * gives for `npm start &` or `npm run dev &` is npm's, and SIGTERM to it must reach node, which
 * drains and closes; nothing may keep listening. npm forwards SIGTERM to its script's process,
 * so each start script ends in `exec node …` (no shell left between), the build being its own
 * step (`prestart`).
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `npm <args>` as a developer would from the README, and waits for its Ready line. */
async function startLikeTheReadme(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-npm-start-'));
  dirs.push(dataDir);
  const child = spawn('npm', args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), DATA_DIR: dataDir, DNS_SERVERS: '127.0.0.1:9', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const until = Date.now() + 90_000;
  while (!output.includes('Ready: ')) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`npm ${args.join(' ')} did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, port, output: () => output, exited };
}

/** Whether anything accepts a connection on host:port. */
function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A non-loopback IPv4 address of this machine, if it has one. */
function lanAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
}

async function stopByPid(started: Started): Promise<number | null> {
  // `kill $!`: SIGTERM to the PID of the command the README gives, nothing else.
  process.kill(started.child.pid as number, 'SIGTERM');
  const timeout = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 20_000).unref());
  const code = await Promise.race([started.exited, timeout]);
  expect(code, started.output()).not.toBe('still running');
  return code as number | null;
}

describe('kill $! on the README start commands', () => {
  it('npm start: SIGTERM to npm stops the service gracefully, and nothing keeps listening', async () => {
    const started = await startLikeTheReadme(['start']);
    expect(await listening('127.0.0.1', started.port)).toBe(true);
    const code = await stopByPid(started);
    expect(code).toBe(0);
    expect(started.output()).toContain('shutting down');
    expect(started.output()).toMatch(/"msg":"stopped"/);
    expect(await listening('127.0.0.1', started.port)).toBe(false);
  }, 120_000);

  it('npm run dev: the same, and the development profile listens on loopback only', async () => {
    const started = await startLikeTheReadme(['run', 'dev'], { DEV_AUTO_OPERATOR: 'deliver' });
    expect(started.output()).toContain('a stand-in operator answers every task');
    expect(await listening('127.0.0.1', started.port)).toBe(true);
    const lan = lanAddress();
    if (lan !== undefined) expect(await listening(lan, started.port), `reachable on ${lan}`).toBe(false);
    const code = await stopByPid(started);
    expect(code).toBe(0);
    expect(started.output()).toMatch(/INFO\s+stopped/);
    expect(await listening('127.0.0.1', started.port)).toBe(false);
    expect(await listening('::1', started.port)).toBe(false);
  }, 120_000);
});
