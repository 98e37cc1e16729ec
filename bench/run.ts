/**
 * Benchmarks for docs/performance.md's targets (npm run bench). Every server runs in its own process on
 * loopback; autocannon drives it from this one. Scenarios, on SQLite and, when DATABASE_URL or
 * TEST_POSTGRES_URL names a PostgreSQL server, on PostgreSQL with one and with two instances
 * behind a loopback balancer (bench/balancer.ts), each on a fresh database:
 *   - status read: project and a bare node:http server serving the same bytes, alternated
 *     A B A B A B; the median of the three ratios is reported
 *   - durable submissions: three runs, median accepted/s
 *   - held long-polls (one instance, each store): wake-up p99 after a change (bench/longpoll.ts)
 *   - crowd (docs/performance.md#many-clients-at-once-and-the-default-path-issues-34-and-28, one instance, each store; bench/crowd.ts): reads and submissions from
 *     BENCH_CROWD (default 3,000) distinct loopback addresses against one, and as many long-polls
 *     held from distinct addresses with a health probe running; then the crowd of keys
 *     (bench/crowd-agents.ts): as many submissions and reads from distinct verified agents' keys
 *     as from distinct addresses
 *   - default path (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28; bench/default-path.ts): e-mail-delivery submissions, each from its own
 *     address (TRUST_PROXY), confirmation mail to a local SMTP sink; three runs, median accepted/s,
 *     the outbox's lag and a status read probe during the flood, and where the median run's CPU
 *     went (bench/cpu-budget.ts: per submission, the rate the machine's cores could carry, and how
 *     the busiest event loop and the load generator spent the run: on a core, waiting for one, asleep)
 * Per scenario: p50/p99 latency and the peak RSS of the service processes. Exits 1 below a target:
 *   status read SQLite ≥ 0.6× bare; PostgreSQL one instance ≥ 0.35× bare; submissions SQLite
 *   ≥ 3,000/s; PostgreSQL two instances ≥ 1,500/s; long-poll wake-up p99 ≤ 50 ms; peak RSS ≤ 110 MB;
 *   crowd: distinct/one ≤ 1.5× for reads and submissions, health probe p99 ≤ 50 ms, every poll
 *   released within 1 s of its wait, keys/addresses ≤ 1.5× for submissions and reads; default path: SQLite ≥ 3,000/s, PostgreSQL two instances
 *   ≥ 2,000/s, outbox never more than 5 s behind, status read probe p99 ≤ 20 ms, console queue
 *   page probe p99 ≤ 100 ms.
 * BENCH_SECONDS (default 10) per run; BENCH_ROUNDS (default 3) measured runs per scenario, the
 * median reported ("three runs" above); BENCH_ONLY=read|submit|longpoll|crowd|mail|agents runs one scenario
 * (agents: bench/agents.ts, a Web Bot Auth verification with a cached directory ≤ 200 µs);
 * BENCH_CROWD (default 3000) clients and BENCH_CROWD_WAIT (default 10) seconds of the crowd's polls;
 * BENCH_STORES=sqlite|postgres (comma-separated) limits the stores; BENCH_LOG_LEVEL (default warn)
 * is the services' LOG_LEVEL (info adds the two request log lines to every request); BENCH_NODE_FLAGS
 * adds Node flags after `npm start`'s (bench/service.ts).
 * Traffic goes only to 127.0.0.1 (and to the PostgreSQL server named).
 */
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { startDnsServer } from '../test/support/dns-server.js';
import { freePort, waitForServer } from '../test/support/net.js';
import { AGENT_VERIFY_TARGET_US, benchAgentVerification, describeAgentVerification } from './agents.js';
import { describeBudget } from './cpu-budget.js';
import { benchCrowd } from './crowd.js';
import { benchCrowdAgents, CROWD_AGENTS_BASE_URL } from './crowd-agents.js';
import { type DefaultPathRun, defaultPathEnv, defaultPathRun, startSmtpSink } from './default-path.js';
import { benchLongPoll } from './longpoll.js';
import { ADMIN_KEY, createTask, POSTGRES_URL, signIn, startSetup } from './service.js';

const DURATION = Math.max(1, Number(process.env.BENCH_SECONDS ?? 10));
const WARMUP = Math.min(2, DURATION);
/** Measured runs per scenario (default 3, the median reported); the smoke test runs one. */
const ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 3)) || 1);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WAITERS = Number(process.env.BENCH_WAITERS ?? 2000);
const ONLY = process.env.BENCH_ONLY;
const CROWD = Number(process.env.BENCH_CROWD ?? 3000);
const CROWD_WAIT = Number(process.env.BENCH_CROWD_WAIT ?? 10);
/** The outbox may fall behind the submissions it follows by at most this much. */
const OUTBOX_LAG_TARGET_S = 5;
const FLOOD_READ_P99_TARGET_MS = 20;
const FLOOD_CONSOLE_P99_TARGET_MS = 100;
const RSS_TARGET_MB = 110;

interface Setup {
  name: string;
  store: 'sqlite' | 'postgres';
  instances: number;
  readTarget?: number;
  submitTarget?: number;
  longPoll?: boolean;
  /** Run the crowd scenario (on one instance of this store). */
  crowd?: boolean;
  /** Run the default-path scenario; its target in accepted/s, when it has one. */
  defaultPath?: { target?: number };
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

/** Starts the setup's instances, measures every scenario, stops. */
async function runSetup(setup: Setup, failures: string[]): Promise<void> {
  const running = await startSetup({ store: setup.store, instances: setup.instances });
  try {
    const { base, rss } = running;
    if (ONLY === undefined || ONLY === 'read') await statusReads(setup, base, rss, failures);
    if (ONLY === undefined || ONLY === 'submit') await submissions(setup, base, rss, failures);
    if (setup.longPoll && (ONLY === undefined || ONLY === 'longpoll')) {
      const pid = running.services[0]?.process.pid ?? 0;
      const longPoll = await benchLongPoll({ base, pid, adminKey: ADMIN_KEY, waiters: WAITERS });
      for (const line of longPoll.lines) process.stdout.write(`[${setup.name}] ${line}\n`);
      failures.push(...longPoll.failures.map((f) => `${setup.name}: ${f}`));
    }
    const peak = rss();
    process.stdout.write(`[${setup.name}] peak RSS per service process: ${peak} MB (target ≤ ${RSS_TARGET_MB} MB)\n`);
    if (peak > RSS_TARGET_MB) failures.push(`${setup.name}: peak RSS`);
  } finally {
    await running.stop();
  }
  if (setup.crowd && (ONLY === undefined || ONLY === 'crowd')) await crowd(setup, failures);
  if (setup.defaultPath && (ONLY === undefined || ONLY === 'mail')) await defaultPath(setup, setup.defaultPath.target, failures);
}

/** The crowd scenario on a fresh instance (connections raised so 3,000 held polls fit beside the probe). */
async function crowd(setup: Setup, failures: string[]): Promise<void> {
  // WEBHOOK_ALLOW_PRIVATE and BASE_URL for the crowd of keys (their directories on loopback, the authority they sign).
  const env = { MAX_CONNECTIONS: String(CROWD * 3 + 1000), WEBHOOK_ALLOW_PRIVATE: 'true', BASE_URL: CROWD_AGENTS_BASE_URL };
  const running = await startSetup({ store: setup.store, instances: 1, env });
  try {
    const result = await benchCrowd({ base: running.base, clients: CROWD, waitSeconds: CROWD_WAIT });
    // Then the crowd of keys on the same instance, from addresses the crowd did not use (it uses 3N).
    const keys = await benchCrowdAgents({ base: running.base, clients: CROWD, firstAddress: 8 * CROWD, pid: running.services[0]?.process.pid });
    for (const line of [...result.lines, ...keys.lines]) process.stdout.write(`[${setup.name}] ${line}\n`);
    failures.push(...[...result.failures, ...keys.failures].map((f) => `${setup.name}: ${f}`));
  } finally {
    await running.stop();
  }
}

/** The default path on fresh instances, with a local DNS server and SMTP sink: warm-up, then three runs. */
async function defaultPath(setup: Setup, target: number | undefined, failures: string[]): Promise<void> {
  const dns = await startDnsServer();
  const sink = await startSmtpSink();
  const running = await startSetup({
    store: setup.store,
    instances: setup.instances,
    env: defaultPathEnv(sink, dns.address),
  });
  try {
    const task_id = await createTask(running.base, 'Default-path probe task: count the benches.', { 'x-forwarded-for': '192.0.2.2' });
    const probeUrl = `${running.base}/api/v1/tasks/${task_id}`;
    const consoleCookie = await signIn(running.base, { 'x-forwarded-for': '192.0.2.3' });
    const servicePids = running.services.map((s) => s.process.pid ?? 0);
    const options = { base: running.base, sink, seconds: DURATION, connections: CONNECTIONS, consoleCookie, servicePids };
    await defaultPathRun({ ...options, seconds: WARMUP }, probeUrl);
    const runs: DefaultPathRun[] = [];
    for (let round = 0; round < ROUNDS; round++) runs.push(await defaultPathRun(options, probeUrl));
    const rate = median(runs.map((r) => r.rate));
    const lag = Math.max(...runs.map((r) => r.lagSeconds));
    const probe = Math.max(...runs.map((r) => r.probeP99));
    const consoleP99 = Math.max(...runs.map((r) => r.consoleP99));
    const errors = runs.reduce((sum, r) => sum + r.errors, 0);
    process.stdout.write(
      `[${setup.name}] default-path submissions (e-mail, distinct addresses, SMTP sink): median ${Math.round(rate)}/s${target ? ` (target ≥ ${target}/s)` : ''}; ${runs.at(-1)?.latency ?? ''}; outbox behind at most ${lag.toFixed(1)} s (target ≤ ${OUTBOX_LAG_TARGET_S} s); status read during the flood p99 ${probe.toFixed(1)} ms (target ≤ ${FLOOD_READ_P99_TARGET_MS} ms); console queue page during the flood p99 ${consoleP99.toFixed(1)} ms (target ≤ ${FLOOD_CONSOLE_P99_TARGET_MS} ms); peak RSS ${running.rss()} MB; errors ${errors}\n`,
    );
    const budget = [...runs].sort((a, b) => a.rate - b.rate)[Math.floor(runs.length / 2)]?.budget;
    if (budget) process.stdout.write(`[${setup.name}] default path, the median run: ${describeBudget(budget)}\n`);
    if (target !== undefined && !(rate >= target)) failures.push(`${setup.name}: default-path throughput`);
    if (!(lag <= OUTBOX_LAG_TARGET_S)) failures.push(`${setup.name}: outbox lag`);
    if (!(probe <= FLOOD_READ_P99_TARGET_MS)) failures.push(`${setup.name}: status reads during the flood`);
    if (!(consoleP99 <= FLOOD_CONSOLE_P99_TARGET_MS)) failures.push(`${setup.name}: the console during the flood`);
    if (errors > 0) failures.push(`${setup.name}: default-path submissions had errors`);
  } finally {
    await running.stop();
    sink.stop();
    await dns.close();
  }
}

const latency = (r: autocannon.Result) => `p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms`;

/** Status reads against a bare node:http server serving the very same bytes, A B A B A B. */
async function statusReads(setup: Setup, base: string, rss: () => number, failures: string[]): Promise<void> {
  const task_id = await createTask(base, 'Benchmark task: count the benches in the park.');
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
    for (let round = 0; round < ROUNDS; round++) {
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
  for (let round = 0; round < ROUNDS; round++) {
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
  const setups: Setup[] = [
    { name: 'SQLite', store: 'sqlite', instances: 1, readTarget: 0.6, submitTarget: 3000, longPoll: true, crowd: true, defaultPath: { target: 3000 } },
  ];
  if (POSTGRES_URL) {
    setups.push({ name: 'PostgreSQL, one instance', store: 'postgres', instances: 1, readTarget: 0.35, longPoll: true, crowd: true, defaultPath: {} });
    setups.push({ name: 'PostgreSQL, two instances', store: 'postgres', instances: 2, submitTarget: 1500, defaultPath: { target: 2000 } });
  } else {
    process.stdout.write('PostgreSQL skipped: set DATABASE_URL or TEST_POSTGRES_URL to a postgres:// server\n');
  }
  const stores = process.env.BENCH_STORES?.split(',');
  if (ONLY !== 'agents') for (const setup of setups) if (!stores || stores.includes(setup.store)) await runSetup(setup, failures);
  if (!ONLY || ONLY === 'agents') {
    // Issue 53: a Web Bot Auth verification with the directory cached (bench/agents.ts), in process.
    // CPU time per verification decides (the machine may be shared); the wall time is printed beside it.
    const cost = await benchAgentVerification();
    process.stdout.write(`${describeAgentVerification(cost)}\n`);
    if (!(cost.cpuUs <= AGENT_VERIFY_TARGET_US)) failures.push('agent signature verification');
  }
  if (failures.length > 0) {
    process.stdout.write(`missed: ${failures.join(', ')}\n`);
    process.exit(1);
  }
  process.stdout.write('all targets met\n');
}

await main();
