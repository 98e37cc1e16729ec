/**
 * Where a flood's CPU went, per accepted request, and the rate this machine's cores could carry at
 * that cost (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28: is a missed throughput target the service's or the machine's?). Read from
 * /proc: the whole machine (/proc/stat), each service process and its event loop (its main thread),
 * and PostgreSQL's processes (by name), over the same stretch of time. Everything else busy on the
 * machine meanwhile (the load generator, the probes, the SMTP sink, the balancer, the kernel's
 * network work) is "the rest".
 *
 * The busiest event loop's wall time is split three ways from its thread's schedstat (run time and
 * run-queue wait, in ns, kept by the scheduler): on a core, runnable but waiting for one, and asleep
 * (nothing to do: waiting in epoll for the next request or reply). A loop that waits for a core is
 * short of CPU; a loop asleep while connections wait is short of work. The load generator (this
 * process's main thread, where autocannon runs) is split the same way: a generator on a core all
 * of the time is the limit.
 *
 * Two ceilings follow, each an upper bound that ignores every wait:
 * - the machine: its cores' time divided by the machine's CPU per request;
 * - the event loops: each service process answers its share on one thread, which cannot be busy
 *   more than all of the time.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** Clock ticks of /proc (USER_HZ, 100 on Linux). */
const TICK_US = 10_000;

interface Snapshot {
  /** Machine time in ticks: busy and in all. */
  busy: number;
  total: number;
  /** Per service pid: the process's ticks and its main thread's. */
  services: { process: number; loop: number; sched: Sched }[];
  postgres: number;
  /** The load generator: this process's main thread. */
  generator: Sched;
  /** Wall clock, ns. */
  at: number;
}

/** A thread's share of the wall time on a core, runnable waiting for one, and asleep. */
interface ThreadTime {
  running: number;
  waiting: number;
  asleep: number;
}

function threadTime(before: Sched | undefined, after: Sched | undefined, wall: number): ThreadTime {
  const running = ((after?.run ?? 0) - (before?.run ?? 0)) / wall;
  const waiting = ((after?.wait ?? 0) - (before?.wait ?? 0)) / wall;
  return { running, waiting, asleep: Math.max(0, 1 - running - waiting) };
}

/** A thread's time on a core and runnable waiting for one, in ns (/proc/…/schedstat). */
interface Sched {
  run: number;
  wait: number;
}

function readSched(file: string): Sched {
  try {
    const [run, wait] = readFileSync(file, 'utf8').trim().split(/\s+/).map(Number);
    return { run: run ?? 0, wait: wait ?? 0 };
  } catch {
    return { run: 0, wait: 0 };
  }
}

/** A /proc/<pid>[/task/<tid>]/stat file's command name and CPU time (utime + stime, fields 14 and 15); undefined once the process is gone. */
function readStat(file: string): { comm: string; ticks: number } | undefined {
  try {
    const raw = readFileSync(file, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return { comm: raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')')), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** A process's CPU time so far, in clock ticks (1/100 s); 0 once it is gone. */
export function processTicks(pid: number): number {
  return readStat(`/proc/${pid}/stat`)?.ticks ?? 0;
}

function postgresTicks(): number {
  let sum = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(`/proc/${entry}/stat`);
    if (stat?.comm === 'postgres') sum += stat.ticks;
  }
  return sum;
}

export function cpuSnapshot(servicePids: number[]): Snapshot {
  const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1, 9).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  const total = cpu.reduce((a, b) => a + b, 0);
  const busy = total - (cpu[3] ?? 0) - (cpu[4] ?? 0);
  return {
    busy,
    total,
    services: servicePids.map((pid) => ({
      process: processTicks(pid),
      loop: readStat(`/proc/${pid}/task/${pid}/stat`)?.ticks ?? 0,
      sched: readSched(`/proc/${pid}/task/${pid}/schedstat`),
    })),
    postgres: postgresTicks(),
    generator: readSched(`/proc/${process.pid}/task/${process.pid}/schedstat`),
    at: Number(process.hrtime.bigint()),
  };
}

export interface CpuBudget {
  /** µs of CPU per accepted request. */
  machine: number;
  service: number;
  /** The busiest service process's event loop, per request that process answered (its share). */
  loop: number;
  postgres: number;
  rest: number;
  /** Share of the machine's time idle meanwhile. */
  idle: number;
  /** The busiest event loop's wall time: on a core, runnable waiting for one, asleep (shares of 1). */
  loopTime: ThreadTime;
  /** The load generator's wall time, the same way. */
  generatorTime: ThreadTime;
  /** Requests/s the cores could carry at this cost, and the event loops. */
  machineCeiling: number;
  loopCeiling: number;
}

export function cpuBudget(before: Snapshot, after: Snapshot, accepted: number): CpuBudget {
  const per = (ticks: number) => (ticks * TICK_US) / Math.max(1, accepted);
  const instances = after.services.length;
  const service = after.services.reduce((sum, s, i) => sum + s.process - (before.services[i]?.process ?? 0), 0);
  const loops = after.services.map((s, i) => s.loop - (before.services[i]?.loop ?? 0));
  const busiest = loops.indexOf(Math.max(...loops));
  const wall = Math.max(1, after.at - before.at);
  // A balancer shares requests out evenly, so each process answered about 1/instances of them.
  const loop = ((loops[busiest] ?? 0) * TICK_US * instances) / Math.max(1, accepted);
  const machine = per(after.busy - before.busy);
  const postgres = per(after.postgres - before.postgres);
  const cores = cpus().length;
  return {
    machine,
    service: per(service),
    loop,
    postgres,
    rest: Math.max(0, machine - per(service) - postgres),
    idle: 1 - (after.busy - before.busy) / Math.max(1, after.total - before.total),
    loopTime: threadTime(before.services[busiest]?.sched, after.services[busiest]?.sched, wall),
    generatorTime: threadTime(before.generator, after.generator, wall),
    machineCeiling: (cores * 1e6) / Math.max(1, machine),
    loopCeiling: (instances * 1e6) / Math.max(1, loop),
  };
}

export function describeBudget(budget: CpuBudget): string {
  const us = (value: number) => `${Math.round(value)} µs`;
  const pct = (share: number) => `${Math.round(share * 100)} %`;
  const split = (time: ThreadTime) => `on a core ${pct(time.running)}, waiting for one ${pct(time.waiting)}, asleep ${pct(time.asleep)}`;
  return (
    `CPU per submission: machine ${us(budget.machine)} = service ${us(budget.service)} (busiest event loop ${us(budget.loop)} per submission it answered)` +
    `${budget.postgres >= 10 ? ` + PostgreSQL ${us(budget.postgres)}` : ''} + the rest ${us(budget.rest)} (load generator, probes, SMTP sink, balancer, kernel); ` +
    `machine idle ${Math.round(budget.idle * 100)} %; ` +
    `the busiest event loop ${split(budget.loopTime)}, the load generator ${split(budget.generatorTime)}; at this cost the ${cpus().length} cores carry at most ${Math.round(budget.machineCeiling)}/s, the event loops ${Math.round(budget.loopCeiling)}/s`
  );
}
