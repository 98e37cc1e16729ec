/**
 * Instructions per request (npm run bench:instructions -- [read|mail]): the service, started as
 * `npm start` starts it, runs under `valgrind --tool=callgrind` (one file per thread); a warm-up,
 * then the counters are zeroed, an exact number of requests is sent over 10 connections, and the
 * counters are dumped. Prints the instructions per request on the main thread and over all
 * threads (the mail thread, the compiler and the garbage collector's helpers). Unlike time, the
 * count hardly depends on what else the machine is doing: it repeats within about 10 %, so it is
 * the figure to compare two builds by on a shared machine (docs/performance.md). Needs valgrind
 * (callgrind and callgrind_control); starting takes about a minute, each count a few more.
 * SQLite only.
 *
 * - `read` (the default): status reads of one task; 6,000 to warm up, BENCH_READS (4,000) counted.
 * - `mail`: the default path (default-path.ts): e-mail-delivery submissions, each from its own
 *   address, the MX through a local DNS server, every submission's mail delivered to the local
 *   SMTP sink; 2,000 to warm up, BENCH_SUBMISSIONS (1,000) counted. The counters are dumped once
 *   the sink has every mail of the counted submissions, so the mail's cost is in the count.
 *   Instructions are user space only: the kernel's share (writes, fsync) is not counted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startDnsServer } from '../test/support/dns-server.js';
import { defaultPathEnv, defaultPathRequest, type SmtpSink, startSmtpSink } from './default-path.js';
import { createTask, type RunningSetup, startSetup } from './service.js';

const scenario = process.argv[2] === 'mail' ? 'mail' : 'read';
const out = mkdtempSync(path.join(tmpdir(), 'hts-callgrind-'));
const wrapper = ['valgrind', '-q', '--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${path.join(out, 'cg.%p.out')}`];

/** callgrind_control, with the environment the service runs in (vgdb names its pipes after USER and HOST). */
function control(pid: number, action: string): void {
  execFileSync('callgrind_control', [action, String(pid)], { env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1' }, stdio: 'ignore' });
}

/** The `totals:` of every thread's file of dump number `dump`, main thread first. */
function totals(pid: number, dump: number): number[] {
  const prefix = `cg.${pid}.out.${dump}-`;
  return readdirSync(out)
    .filter((name) => name.startsWith(prefix))
    .sort()
    .map((name) => Number(/^totals:\s+(\d+)/m.exec(readFileSync(path.join(out, name), 'utf8'))?.[1] ?? 0));
}

function send(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 10, timeout: 120, ...options }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

interface Counted {
  /** What one request is called in the report. */
  what: string;
  amount: number;
  warmUp: number;
  /** Sends `amount` requests; resolves with how many were answered as they should be. */
  run(amount: number): Promise<number>;
}

/** Warm-up, then two counts of exactly `amount` requests. */
async function count(setup: RunningSetup, counted: Counted): Promise<void> {
  const pid = setup.services[0]?.process.pid ?? 0;
  await counted.run(counted.warmUp);
  for (let run = 1; run <= 2; run++) {
    control(pid, '--zero');
    const answered = await counted.run(counted.amount);
    control(pid, '--dump');
    const [main = 0, ...others] = totals(pid, run);
    const all = main + others.reduce((a, b) => a + b, 0);
    const per = (n: number) => Math.round(n / counted.amount);
    // The other threads by their count, largest first (callgrind numbers threads, it does not name them).
    const busiest = others
      .filter((n) => per(n) >= 1000)
      .sort((a, b) => b - a)
      .map(per);
    process.stdout.write(
      `${counted.what}, run ${run}: ${per(main)} instructions per request on the main thread, ${per(all)} over all threads` +
        ` (the other threads, largest first: ${busiest.join(', ') || 'none'})` +
        (answered === counted.amount ? '\n' : ` (only ${answered} of ${counted.amount} answered as expected)\n`),
    );
  }
}

async function statusReads(): Promise<void> {
  const setup = await startSetup({ store: 'sqlite', instances: 1, wrapper });
  try {
    const url = `${setup.base}/api/v1/tasks/${await createTask(setup.base, 'Instruction count task: count the benches.')}`;
    await count(setup, {
      what: 'status read',
      amount: Number(process.env.BENCH_READS ?? 4000),
      warmUp: 6000,
      run: async (amount) => (await send({ url, amount }))['2xx'],
    });
  } finally {
    await setup.stop();
  }
}

/** Resolves once the sink holds `total` mails (or after `ms`, with what it has). */
async function delivered(sink: SmtpSink, total: number, ms: number): Promise<number> {
  const until = performance.now() + ms;
  while (sink.received() < total && performance.now() < until) await new Promise((r) => setTimeout(r, 100));
  return sink.received();
}

async function defaultPath(): Promise<void> {
  const dns = await startDnsServer();
  const sink = await startSmtpSink();
  const setup = await startSetup({ store: 'sqlite', instances: 1, wrapper, env: defaultPathEnv(sink, dns.address) });
  try {
    await count(setup, {
      what: 'default-path submission (e-mail, its own address, its mail delivered)',
      amount: Number(process.env.BENCH_SUBMISSIONS ?? 1000),
      warmUp: 2000,
      run: async (amount) => {
        const before = sink.received();
        const accepted = (await send({ url: `${setup.base}/api/v1/tasks`, method: 'POST', amount, requests: [defaultPathRequest] }))['2xx'];
        // Every accepted submission's mail, so that the mail thread's work is in the count.
        const mails = (await delivered(sink, before + accepted, 300_000)) - before;
        return Math.min(accepted, mails);
      },
    });
  } finally {
    await setup.stop();
    sink.stop();
    await dns.close();
  }
}

try {
  await (scenario === 'mail' ? defaultPath() : statusReads());
} finally {
  rmSync(out, { recursive: true, force: true });
}
