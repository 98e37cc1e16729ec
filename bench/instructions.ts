/**
 * Instructions per status read (npm run bench:instructions): the service, started as `npm start`
 * starts it, runs under `valgrind --tool=callgrind` (one file per thread); 6,000 reads warm it
 * up, the counters are zeroed, exactly BENCH_READS (default 4,000) reads are sent over 10
 * connections, and the counters are dumped. Prints the instructions per read on the main thread
 * and over all threads (the compiler and the garbage collector's helpers). Unlike time, the count
 * hardly depends on what else the machine is doing: it repeats within about 10 %, so it is the
 * figure to compare two builds by on a shared machine (docs/performance.md). Needs valgrind
 * (callgrind and callgrind_control); starting takes about a minute, each count a few more.
 * SQLite only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startSetup } from './service.js';

const READS = Number(process.env.BENCH_READS ?? 4000);
const WARM_UP = 6000;
const out = mkdtempSync(path.join(tmpdir(), 'hts-callgrind-'));

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

function reads(url: string, amount: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, amount, connections: 10, timeout: 120 }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

const setup = await startSetup({
  store: 'sqlite',
  instances: 1,
  wrapper: ['valgrind', '-q', '--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${path.join(out, 'cg.%p.out')}`],
});
try {
  const pid = setup.services[0]?.process.pid ?? 0;
  const created = await fetch(`${setup.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ task_type: 'data_collection', description: 'Instruction count task: count the benches.', delivery: 'status_poll' }),
  });
  const { task_id } = (await created.json()) as { task_id: string };
  const url = `${setup.base}/api/v1/tasks/${task_id}`;
  await reads(url, WARM_UP);
  for (let run = 1; run <= 2; run++) {
    control(pid, '--zero');
    const result = await reads(url, READS);
    control(pid, '--dump');
    const [main = 0, ...others] = totals(pid, run);
    const all = main + others.reduce((a, b) => a + b, 0);
    process.stdout.write(
      `status read, run ${run}: ${Math.round(main / READS)} instructions per read on the main thread, ${Math.round(all / READS)} over all threads` +
        (result['2xx'] === READS ? '\n' : ` (only ${result['2xx']} of ${READS} answered 2xx)\n`),
    );
  }
} finally {
  await setup.stop();
  rmSync(out, { recursive: true, force: true });
}
