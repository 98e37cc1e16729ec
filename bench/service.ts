/**
 * Starting the service for the benchmarks and profiles: the same bundle and Node flags as
 * `npm start`, each instance its own process on loopback, on a fresh SQLite directory or a fresh
 * PostgreSQL database (dropped afterwards), several instances behind the loopback balancer
 * (bench/balancer.ts), which runs as a process of its own: inside the load generator's process
 * it took the event loop the load generator needs, and the instances were sent half as much.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, waitForServer } from '../test/support/net.js';

const ROOT = path.resolve(import.meta.dirname, '..');
export const ADMIN_KEY = 'bench-admin-key-0123456789';
export const POSTGRES_URL = [process.env.DATABASE_URL, process.env.TEST_POSTGRES_URL].find((url) => url?.startsWith('postgres'));
const NODE_FLAGS = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .filter((word) => word.startsWith('--') && !word.startsWith('--enable-source-maps'))
  // BENCH_NODE_FLAGS: flags added after npm start's, for trying one (a V8 flag given twice takes the last value).
  .concat((process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((word) => word !== ''));

export interface BenchService {
  process: ChildProcess;
  port: number;
}

/** Peak resident memory (VmHWM) of a process, in MB. */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

async function startService(env: Record<string, string>, extraFlags: string[], wrapper: string[]): Promise<BenchService> {
  const port = await freePort();
  const [command, ...wrapperArgs] = [...wrapper, process.execPath];
  const child = spawn(command ?? process.execPath, [...wrapperArgs, ...NODE_FLAGS, ...extraFlags, 'dist/server.mjs'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      // warn: no per-request lines (at info each request writes two, to stdout, ignored here).
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      ADMIN_KEY,
      // Limits out of the way: this measures the machinery, not the quotas (every guard still
      // runs). All load comes from one address, which the per-address connection cap would refuse.
      TASK_LIMIT_PER_HOUR: '100000000',
      TASK_LIMIT_PER_DAY: '100000000',
      READ_LIMIT_PER_MINUTE: '100000000',
      DAILY_TASK_CAP: '100000000',
      DAILY_EMAIL_CAP: '100000000',
      STATUS_POLL_LIMIT_PER_DAY: '100000000',
      AUTO_BLOCK_REFUSALS: '100000000',
      MAX_CONNECTIONS_PER_ADDRESS: '100000',
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '50',
      ...env,
    },
  });
  // Under a wrapper such as valgrind the service starts tens of times slower.
  await waitForServer(`http://127.0.0.1:${port}/api/v1/health`, wrapper.length > 0 ? 300_000 : 30_000);
  return { process: child, port };
}

/** The loopback balancer in a process of its own; resolves with its port. */
async function startBalancerProcess(ports: number[]): Promise<{ process: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/balancer.ts'), ...ports.map(String)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (data: Buffer) => resolve(Number(String(data).trim())));
    child.once('exit', (code) => reject(new Error(`the balancer exited with ${code}`)));
  });
  return { process: child, port };
}

/** A fresh PostgreSQL database; dropped by the returned function. */
export async function createDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export interface SetupOptions {
  store: 'sqlite' | 'postgres';
  instances: number;
  extraFlags?: string[];
  env?: Record<string, string>;
  /** A command the service runs under (e.g. valgrind and its options), before `node`. */
  wrapper?: string[];
}

export interface RunningSetup {
  services: BenchService[];
  /** The one instance, or the balancer in front of several. */
  base: string;
  /** Peak RSS of the largest service process so far, in MB. */
  rss(): number;
  stop(): Promise<void>;
}

/** Starts the instances (the first alone, so migrations do not race) and the balancer if needed. */
export async function startSetup(options: SetupOptions): Promise<RunningSetup> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-bench-'));
  const database = options.store === 'postgres' && POSTGRES_URL ? await createDatabase(POSTGRES_URL) : undefined;
  const env = { DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}), ...options.env };
  const services: BenchService[] = [];
  let balancer: { process: ChildProcess; port: number } | undefined;
  const stop = async () => {
    balancer?.process.kill();
    for (const service of services) {
      service.process.kill('SIGTERM');
      if (service.process.exitCode === null) await new Promise((r) => service.process.once('exit', r));
    }
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < options.instances; i++) services.push(await startService(env, options.extraFlags ?? [], options.wrapper ?? []));
    if (options.instances > 1) balancer = await startBalancerProcess(services.map((s) => s.port));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    services,
    base: `http://127.0.0.1:${balancer?.port ?? services[0]?.port}`,
    rss: () => Math.max(...services.map((s) => peakRssMb(s.process.pid ?? 0))),
    stop,
  };
}

/** Submits a task with status_poll delivery (no mail) for the benchmark to read or change; its id. */
export async function createTask(base: string, description: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ task_type: 'data_collection', description, delivery: 'status_poll' }),
  });
  if (res.status !== 202) throw new Error(`benchmark task: ${res.status}`);
  return ((await res.json()) as { task_id: string }).task_id;
}

/** A new task (createTask) read once: its id and the ETag a long-poll waits on. */
export async function taskToWatch(base: string, description: string): Promise<{ id: string; etag: string }> {
  const id = await createTask(base, description);
  const read = await fetch(`${base}/api/v1/tasks/${id}`);
  await read.arrayBuffer();
  return { id, etag: read.headers.get('etag') ?? '' };
}

/** Signs in to the console with the benchmark's operator key; the session cookie (name=value). */
export async function signIn(base: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${base}/operator/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ key: ADMIN_KEY, next: '/operator' }).toString(),
    redirect: 'manual',
  });
  if (res.status !== 303) throw new Error(`console sign-in: ${res.status}`);
  return (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}
