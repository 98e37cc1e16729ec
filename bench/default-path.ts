/**
 * Scenario "default path" (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28): submissions as real traffic sends them — e-mail delivery (the
 * default), each from its own address (X-Forwarded-For through TRUST_PROXY=1, so every submission
 * has its own client counters), the contact domain's MX checked against a local DNS server, and
 * the confirmation mail delivered through the outbox to a local SMTP sink (bench/smtp-sink.ts)
 * during the run. Per run: accepted submissions per second; how far the outbox falls behind (the
 * age of the oldest submission whose mail the sink has not received yet, sampled every 100 ms,
 * until the sink has them all); and, while the flood runs, a status read probe (one read at a time
 * from another address) and a console probe (the operator's queue page, signed in, one request
 * every 100 ms): their p99 (docs/performance.md#many-clients-at-once-and-the-default-path-issues-34-and-28).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { type CpuBudget, cpuBudget, cpuSnapshot } from './cpu-budget.js';
import { startProbe } from './probes.js';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface SmtpSink {
  port: number;
  /** Mails received so far. */
  received(): number;
  stop(): void;
}

/** The SMTP sink in a process of its own. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/smtp-sink.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let received = 0;
  let buffered = '';
  const port = await new Promise<number>((resolve, reject) => {
    let first = true;
    child.stdout?.on('data', (data: Buffer) => {
      buffered += String(data);
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (first) {
          first = false;
          resolve(Number(line));
        } else {
          received = Number(line);
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`the SMTP sink exited with ${code}`)));
  });
  return { port, received: () => received, stop: () => child.kill() };
}

/** The service's environment for the default path: real per-client limits, the sink, the local DNS. */
export function defaultPathEnv(sink: SmtpSink, dnsAddress: string): Record<string, string> {
  return {
    TRUST_PROXY: '1',
    SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
    DNS_SERVERS: dnsAddress,
    DNS_TIMEOUT_MS: '500',
    // The real per-client limits: each submission comes from a client of its own.
    TASK_LIMIT_PER_HOUR: '3',
    TASK_LIMIT_PER_DAY: '5',
    // Every submission's mail: the operator's new-task notification (requesters get mail on changes).
    OPERATOR_EMAIL: 'operator@mail.bench-operator.dev',
  };
}

export interface DefaultPathOptions {
  base: string;
  sink: SmtpSink;
  seconds: number;
  connections: number;
  /** The console's session cookie: the queue page is probed during the flood. */
  consoleCookie?: string;
  /** The service processes, for where the flood's CPU went (cpu-budget.ts). */
  servicePids?: number[];
}

export interface DefaultPathRun {
  /** Accepted (202) per second. */
  rate: number;
  errors: number;
  /** Longest the outbox was behind, in seconds. */
  lagSeconds: number;
  /** Status read probe during the flood. */
  probeP99: number;
  /** Console queue page during the flood (NaN without a console cookie). */
  consoleP99: number;
  latency: string;
  /** Where the flood's CPU went, per accepted submission (with servicePids). */
  budget?: CpuBudget;
}

let nextClient = 0;
/** Numbers every description of the benchmark, so no submission is another's duplicate. */
let description = 0;
/** A distinct client per submission: 10.a.b.c, never repeated within a benchmark. */
const clientAddress = () => {
  const n = ++nextClient;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

/**
 * The default path's request for autocannon: an e-mail-delivery submission (the default) from an
 * address of its own, with a description no other submission of the benchmark has.
 */
export const defaultPathRequest: autocannon.Request = {
  setupRequest: (req) => ({
    ...req,
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientAddress() },
    body: JSON.stringify({
      task_type: 'data_collection',
      description: `Default-path benchmark submission ${description++}: count the benches in the park.`,
      contact_email: `agent${description % 1000}@mail.bench-agent.dev`,
    }),
  }),
};

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** One run: the flood, the read probe beside it, and the outbox followed until it has caught up. */
export async function defaultPathRun(options: DefaultPathOptions, probeUrl: string): Promise<DefaultPathRun> {
  const { base, sink } = options;
  const startReceived = sink.received();
  // (time, submissions accepted so far): the outbox's lag is measured against these.
  const accepted: { at: number; count: number }[] = [];
  let count = 0;
  // Both probes run in processes of their own, as a user's reads come from elsewhere: in this
  // process they would also time the load generator's busy event loop. They keep their connection,
  // as a polling client does (and as they did with fetch in this process).
  const probe = await startProbe(probeUrl, { intervalMs: 10, keepAlive: true, headers: { 'x-forwarded-for': '192.0.2.1' } });
  const consoleProbe =
    options.consoleCookie === undefined
      ? undefined
      : await startProbe(`${base}/operator`, { intervalMs: 100, keepAlive: true, headers: { cookie: options.consoleCookie, 'x-forwarded-for': '192.0.2.3' } });
  let lag = 0;
  const sample = () => {
    const now = performance.now();
    accepted.push({ at: now, count });
    const delivered = sink.received() - startReceived;
    // The oldest submission not delivered yet: the first moment more had been accepted than delivered.
    const oldest = accepted.find((a) => a.count > delivered);
    if (oldest) lag = Math.max(lag, (now - oldest.at) / 1000);
    return delivered;
  };
  const sampler = setInterval(sample, 100);
  const cpuBefore = options.servicePids && cpuSnapshot(options.servicePids);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${base}/api/v1/tasks`,
        method: 'POST',
        duration: options.seconds,
        connections: options.connections,
        headers: { 'content-type': 'application/json' },
        requests: [defaultPathRequest],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client, statusCode) => {
      if (statusCode === 202) count += 1;
    });
  });
  const cpuAfter = options.servicePids && cpuSnapshot(options.servicePids);
  const probes = await probe.stop();
  const consoleTimes = (await consoleProbe?.stop()) ?? [];
  // Follow the outbox until every confirmation mail is in (at most a minute).
  const until = performance.now() + 60_000;
  while (sample() < count && performance.now() < until) await new Promise((r) => setTimeout(r, 100));
  clearInterval(sampler);
  if (sample() < count) lag = Number.POSITIVE_INFINITY;
  return {
    rate: result['2xx'] / options.seconds,
    errors: result.non2xx + result.errors,
    lagSeconds: lag,
    probeP99: percentile(probes, 99),
    consoleP99: percentile(consoleTimes, 99),
    latency: `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
    ...(cpuBefore && cpuAfter ? { budget: cpuBudget(cpuBefore, cpuAfter, result['2xx']) } : {}),
  };
}
