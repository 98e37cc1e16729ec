/**
 * Benchmarks for the speed and memory targets (npm run bench). Each server runs in its own
 * process on loopback; autocannon drives it from this one. Targets on the 2-core reference machine:
 *   - status reads ≥ 0.5× the throughput of a bare node:http server serving the same bytes
 *   - ≥ 1,000 durable submissions/s on SQLite
 *   - peak RSS of the service ≤ 150 MB
 *   - BENCH_WAITERS (default 2,000) held long-polls: memory per held request, wake-up p99 (bench/longpoll.ts)
 * Exits 1 when a target is missed. Every run is bounded in time and sends traffic only to 127.0.0.1.
 * BENCH_ONLY=longpoll runs the long-poll scenario alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort, waitForServer } from '../test/support/net.js';
import { benchLongPoll } from './longpoll.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WAITERS = Number(process.env.BENCH_WAITERS ?? 2000);
const ONLY = process.env.BENCH_ONLY;
const ADMIN_KEY = 'bench-admin-key-0123456789';
const NODE_FLAGS = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .filter((word) => word.startsWith('--') && !word.startsWith('--enable-source-maps'));

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ duration: DURATION, connections: CONNECTIONS, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** A short warm-up first, so the JIT has compiled the hot paths before anything is measured. */
async function run(opts: autocannon.Options): Promise<autocannon.Result> {
  await cannon({ ...opts, duration: 2 });
  return cannon(opts);
}

async function startService(dataDir: string, port: number): Promise<ChildProcess> {
  // The same bundle and flags as `npm start` (npm run bench builds it first).
  const child = spawn(process.execPath, [...NODE_FLAGS, 'dist/server.mjs'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ADMIN_KEY,
      // Limits out of the way: this measures the machinery, not the quotas.
      TASK_LIMIT_PER_HOUR: '100000000',
      TASK_LIMIT_PER_DAY: '100000000',
      READ_LIMIT_PER_MINUTE: '100000000',
      DAILY_TASK_CAP: '100000000',
      DAILY_EMAIL_CAP: '100000000',
      STATUS_POLL_LIMIT_PER_DAY: '100000000',
      AUTO_BLOCK_REFUSALS: '100000000',
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '50',
    },
  });
  await waitForServer(`http://127.0.0.1:${port}/api/v1/health`);
  return child;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-bench-'));
  const port = await freePort();
  const service = await startService(dataDir, port);
  const base = `http://127.0.0.1:${port}`;
  const failures: string[] = [];
  try {
    if (ONLY !== 'longpoll') await throughput(base, service, failures);
    const longPoll = await benchLongPoll({ base, pid: service.pid ?? 0, adminKey: ADMIN_KEY, waiters: WAITERS });
    for (const line of longPoll.lines) process.stdout.write(`${line}\n`);
    failures.push(...longPoll.failures);
  } finally {
    service.kill('SIGTERM');
    await new Promise((r) => service.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    process.stdout.write(`missed: ${failures.join(', ')}\n`);
    process.exit(1);
  }
  process.stdout.write('all targets met\n');
}

/** Status reads against a bare node:http baseline, durable submissions, and the peak RSS they cost. */
async function throughput(base: string, service: ChildProcess, failures: string[]): Promise<void> {
  const created = await fetch(`${base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ task_type: 'data_collection', description: 'Benchmark task: count the benches in the park.', delivery: 'status_poll' }),
  });
  const { task_id } = (await created.json()) as { task_id: string };
  const statusPath = `/api/v1/tasks/${task_id}`;
  const sample = await fetch(`${base}${statusPath}`);
  const bytes = Buffer.from(await sample.arrayBuffer());

  // The bare baseline: node:http serving the very same bytes — the status body and the same
  // response headers (a client, and the load generator, must read all of them).
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
  await waitForServer(`http://127.0.0.1:${barePort}/`);
  const bareResult = await run({ url: `http://127.0.0.1:${barePort}${statusPath}` });
  bare.kill();

  const readResult = await run({ url: `${base}${statusPath}` });
  const ratio = readResult.requests.average / bareResult.requests.average;
  process.stdout.write(
    `status reads: ${Math.round(readResult.requests.average)} req/s vs bare node:http ${Math.round(bareResult.requests.average)} req/s = ${ratio.toFixed(2)}× (target ≥ 0.50×); non-2xx ${readResult.non2xx}\n`,
  );
  if (ratio < 0.5) failures.push('status read ratio');
  if (readResult.non2xx > 0 || readResult.errors > 0) failures.push('status reads had errors');

  let n = 0;
  const submitResult = await run({
    url: `${base}/api/v1/tasks`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({ task_type: 'data_collection', description: `Benchmark submission number ${n++}: count the benches.`, delivery: 'status_poll' }),
        }),
      },
    ],
  });
  const accepted = submitResult['2xx'] / DURATION;
  process.stdout.write(`durable submissions (SQLite, synchronous=FULL): ${Math.round(accepted)}/s (target ≥ 1000/s); non-2xx ${submitResult.non2xx}\n`);
  if (accepted < 1000) failures.push('submission throughput');
  if (submitResult.non2xx > 0) failures.push('submissions had errors');

  const rss = peakRssMb(service.pid ?? 0);
  process.stdout.write(`peak RSS of the service: ${rss} MB (target ≤ 150 MB)\n`);
  if (rss > 150) failures.push('peak RSS');
}

await main();
