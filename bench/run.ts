/**
 * Benchmarks for issue 17's targets (npm run bench). Every server runs in its own process on
 * loopback; autocannon drives it from this one. Scenarios, on SQLite and, when DATABASE_URL or
 * TEST_POSTGRES_URL names a PostgreSQL server, on PostgreSQL with one and with two instances
 * behind a loopback balancer (bench/balancer.ts), each on a fresh database:
 *   - status read: project and a bare node:http server serving the same bytes, alternated
 *     A B A B A B; the median of the three ratios is reported
 *   - durable submissions: three runs, median accepted/s
 *   - held long-polls (SQLite, one instance): wake-up p99 after a change (bench/longpoll.ts)
 * Per scenario: p50/p99 latency and the peak RSS of the service processes. Exits 1 below a target:
 *   status read SQLite ≥ 0.6× bare; PostgreSQL one instance ≥ 0.35× bare; submissions SQLite
 *   ≥ 3,000/s; PostgreSQL two instances ≥ 1,500/s; long-poll wake-up p99 ≤ 50 ms; peak RSS ≤ 110 MB.
 * BENCH_SECONDS (default 10) per run; BENCH_ONLY=longpoll runs the long-poll scenario alone.
 * Traffic goes only to 127.0.0.1 (and to the PostgreSQL server named).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort, waitForServer } from '../test/support/net.js';
import { startBalancer } from './balancer.js';
import { benchLongPoll } from './longpoll.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DURATION = Math.max(1, Number(process.env.BENCH_SECONDS ?? 10));
const WARMUP = Math.min(2, DURATION);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WAITERS = Number(process.env.BENCH_WAITERS ?? 2000);
const ONLY = process.env.BENCH_ONLY;
const POSTGRES_URL = [process.env.DATABASE_URL, process.env.TEST_POSTGRES_URL].find((url) => url?.startsWith('postgres'));
const ADMIN_KEY = 'bench-admin-key-0123456789';
const RSS_TARGET_MB = 110;
const NODE_FLAGS = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .filter((word) => word.startsWith('--') && !word.startsWith('--enable-source-maps'));

interface Setup {
  name: string;
  store: 'sqlite' | 'postgres';
  instances: number;
  readTarget?: number;
  submitTarget?: number;
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ duration: DURATION, connections: CONNECTIONS, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

async function startService(env: Record<string, string>, port: number): Promise<ChildProcess> {
  // The same bundle and flags as `npm start` (npm run bench builds it first).
  const child = spawn(process.execPath, [...NODE_FLAGS, 'dist/server.mjs'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ADMIN_KEY,
      // Limits out of the way: this measures the machinery, not the quotas (every guard still runs).
      TASK_LIMIT_PER_HOUR: '100000000',
      TASK_LIMIT_PER_DAY: '100000000',
      READ_LIMIT_PER_MINUTE: '100000000',
      DAILY_TASK_CAP: '100000000',
      DAILY_EMAIL_CAP: '100000000',
      STATUS_POLL_LIMIT_PER_DAY: '100000000',
      AUTO_BLOCK_REFUSALS: '100000000',
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '50',
      ...env,
    },
  });
  await waitForServer(`http://127.0.0.1:${port}/api/v1/health`);
  return child;
}

/** A fresh PostgreSQL database for one setup; dropped afterwards. */
async function createDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
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

/** Starts the setup's instances (the first alone, so migrations do not race), measures, stops. */
async function runSetup(setup: Setup, failures: string[]): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-bench-'));
  const database = setup.store === 'postgres' && POSTGRES_URL ? await createDatabase(POSTGRES_URL) : undefined;
  const env = { DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) };
  const services: ChildProcess[] = [];
  let balancer: Awaited<ReturnType<typeof startBalancer>> | undefined;
  try {
    const ports: number[] = [];
    for (let i = 0; i < setup.instances; i++) {
      const port = await freePort();
      services.push(await startService(env, port));
      ports.push(port);
    }
    balancer = setup.instances > 1 ? await startBalancer(ports) : undefined;
    const base = `http://127.0.0.1:${balancer?.port ?? ports[0]}`;
    const rss = () => Math.max(...services.map((s) => peakRssMb(s.pid ?? 0)));
    await statusReads(setup, base, rss, failures);
    await submissions(setup, base, rss, failures);
    if (setup.store === 'sqlite') {
      const longPoll = await benchLongPoll({ base, pid: services[0]?.pid ?? 0, adminKey: ADMIN_KEY, waiters: WAITERS });
      for (const line of longPoll.lines) process.stdout.write(`[${setup.name}] ${line}\n`);
      failures.push(...longPoll.failures.map((f) => `${setup.name}: ${f}`));
    }
    const peak = rss();
    process.stdout.write(`[${setup.name}] peak RSS per service process: ${peak} MB (target ≤ ${RSS_TARGET_MB} MB)\n`);
    if (peak > RSS_TARGET_MB) failures.push(`${setup.name}: peak RSS`);
  } finally {
    await balancer?.close();
    for (const service of services) {
      service.kill('SIGTERM');
      await new Promise((r) => service.once('exit', r));
    }
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const latency = (r: autocannon.Result) => `p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms`;

/** Status reads against a bare node:http server serving the very same bytes, A B A B A B. */
async function statusReads(setup: Setup, base: string, rss: () => number, failures: string[]): Promise<void> {
  const created = await fetch(`${base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ task_type: 'data_collection', description: 'Benchmark task: count the benches in the park.', delivery: 'status_poll' }),
  });
  const { task_id } = (await created.json()) as { task_id: string };
  const statusPath = `/api/v1/tasks/${task_id}`;
  const sample = await fetch(`${base}${statusPath}`);
  const bytes = Buffer.from(await sample.arrayBuffer());
  // The same response headers too: a client, and the load generator, must read all of them.
  const headers: Record<string, string> = {};
  sample.headers.forEach((value, name) => {
    if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) headers[name] = value;
  });
  const barePort = await freePort();
  const bare = spawn(
    process.execPath,
    [
      '-e',
      `const b=Buffer.from(${JSON.stringify(bytes.toString('base64'))},'base64');const h=${JSON.stringify(headers)};require('node:http').createServer((q,s)=>{s.writeHead(200,h);s.end(b)}).listen(${barePort},'127.0.0.1')`,
    ],
    { stdio: 'ignore' },
  );
  try {
    await waitForServer(`http://127.0.0.1:${barePort}/`);
    const projectUrl = `${base}${statusPath}`;
    const bareUrl = `http://127.0.0.1:${barePort}${statusPath}`;
    // Warm both up so the JIT has compiled the hot paths before anything is measured.
    await cannon({ url: projectUrl, duration: WARMUP });
    await cannon({ url: bareUrl, duration: WARMUP });
    const ratios: number[] = [];
    let last: autocannon.Result | undefined;
    let errors = 0;
    for (let round = 0; round < 3; round++) {
      const project = await cannon({ url: projectUrl });
      const baseline = await cannon({ url: bareUrl });
      ratios.push(project.requests.average / baseline.requests.average);
      errors += project.non2xx + project.errors;
      last = project;
      process.stdout.write(
        `[${setup.name}] status read round ${round + 1}: ${Math.round(project.requests.average)} req/s vs bare ${Math.round(baseline.requests.average)} req/s\n`,
      );
    }
    const ratio = median(ratios);
    const target = setup.readTarget;
    process.stdout.write(
      `[${setup.name}] status read: median ${ratio.toFixed(2)}× bare${target ? ` (target ≥ ${target}×)` : ''}; ${last ? latency(last) : ''}; peak RSS ${rss()} MB; errors ${errors}\n`,
    );
    if (target !== undefined && !(ratio >= target)) failures.push(`${setup.name}: status read ratio`);
    if (errors > 0) failures.push(`${setup.name}: status reads had errors`);
  } finally {
    bare.kill();
  }
}

let submissionNumber = 0;

/** Durable submissions (every guard on, the store's full durability): three runs, the median. */
async function submissions(setup: Setup, base: string, rss: () => number, failures: string[]): Promise<void> {
  const options: autocannon.Options = {
    url: `${base}/api/v1/tasks`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            task_type: 'data_collection',
            description: `Benchmark submission number ${submissionNumber++}: count the benches.`,
            delivery: 'status_poll',
          }),
        }),
      },
    ],
  };
  await cannon({ ...options, duration: WARMUP });
  const rates: number[] = [];
  let last: autocannon.Result | undefined;
  let errors = 0;
  for (let round = 0; round < 3; round++) {
    const result = await cannon(options);
    rates.push(result['2xx'] / DURATION);
    errors += result.non2xx + result.errors;
    last = result;
  }
  const rate = median(rates);
  const target = setup.submitTarget;
  process.stdout.write(
    `[${setup.name}] durable submissions: median ${Math.round(rate)}/s${target ? ` (target ≥ ${target}/s)` : ''}; ${last ? latency(last) : ''}; peak RSS ${rss()} MB; errors ${errors}\n`,
  );
  if (target !== undefined && !(rate >= target)) failures.push(`${setup.name}: submission throughput`);
  if (errors > 0) failures.push(`${setup.name}: submissions had errors`);
}

async function main(): Promise<void> {
  const failures: string[] = [];
  if (ONLY === 'longpoll') {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-bench-'));
    const port = await freePort();
    const service = await startService({ DATA_DIR: dataDir }, port);
    try {
      const result = await benchLongPoll({ base: `http://127.0.0.1:${port}`, pid: service.pid ?? 0, adminKey: ADMIN_KEY, waiters: WAITERS });
      for (const line of result.lines) process.stdout.write(`${line}\n`);
      failures.push(...result.failures);
    } finally {
      service.kill('SIGTERM');
      await new Promise((r) => service.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    }
  } else {
    const setups: Setup[] = [{ name: 'SQLite', store: 'sqlite', instances: 1, readTarget: 0.6, submitTarget: 3000 }];
    if (POSTGRES_URL) {
      setups.push({ name: 'PostgreSQL, one instance', store: 'postgres', instances: 1, readTarget: 0.35 });
      setups.push({ name: 'PostgreSQL, two instances', store: 'postgres', instances: 2, submitTarget: 1500 });
    } else {
      process.stdout.write('PostgreSQL skipped: set DATABASE_URL or TEST_POSTGRES_URL to a postgres:// server\n');
    }
    for (const setup of setups) await runSetup(setup, failures);
  }
  if (failures.length > 0) {
    process.stdout.write(`missed: ${failures.join(', ')}\n`);
    process.exit(1);
  }
  process.stdout.write('all targets met\n');
}

await main();
