/**
 * CPU profile of one benchmark scenario (npm run bench:profile -- <read|submit|mail> [sqlite|postgres] [instances]):
 * starts the service as `npm start` does plus --cpu-prof, drives the scenario with autocannon for
 * BENCH_SECONDS (default 10), stops the service and prints, for each of its threads (the event loop
 * first), the top frames by self time, grouped by function and by package, with the profile's path
 * (open it in Chrome DevTools or speedscope for the flame graph). PostgreSQL needs DATABASE_URL or
 * TEST_POSTGRES_URL. Given a .cpuprofile file instead of a scenario, it prints that profile's
 * summary. On SQLite it also prints the statements the event loop ran, by time
 * (bench/statement-times.mjs).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import autocannon from 'autocannon';
import { SQLITE_DRIVER_PATH } from '../src/store/sqlite-driver.js';
import { startDnsServer } from '../test/support/dns-server.js';
import { defaultPathEnv, defaultPathRun, startSmtpSink } from './default-path.js';
import { type BenchService, createTask, POSTGRES_URL, startSetup } from './service.js';
import { type StatementTime, summarizeStatements } from './statements.js';

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const DURATION = Math.max(1, Number(process.env.BENCH_SECONDS ?? 10));

/** Self time per profile node, and the idle and busy time of the whole profile, in µs. */
function selfTimes(profile: CpuProfile): { selfUs: Map<number, number>; idle: number; busy: number } {
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  // Shares of the busy time: an idle stretch (waiting for the outbox after the flood) would dilute them.
  const idle = profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').reduce((sum, n) => sum + (selfUs.get(n.id) ?? 0), 0);
  return { selfUs, idle, busy: [...selfUs.values()].reduce((a, b) => a + b, 0) - idle };
}

/** Self time per function and per package (node_modules/<name>, node: internals, the service). */
export function summarizeProfile(profile: CpuProfile, top = 25): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const { selfUs, idle, busy: total } = selfTimes(profile);
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame || frame.functionName === '(idle)') continue;
    const bundled = frame.url.replace(/^file:\/\//, '');
    const { file, line } = bundled === '' ? { file: '', line: 0 } : original(bundled, frame.lineNumber, frame.columnNumber);
    const where = file === '' ? '' : ` ${shortPath(file)}:${line}`;
    const key = `${frame.functionName || '(anonymous)'}${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const pkg = packageOf(file, frame.functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
  // Inclusive time of the service's own functions (src/): each sample counts once for every
  // distinct function on its stack, so a caller's figure holds all its callees'.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const keyOf = new Map<number, string | undefined>();
  const serviceKey = (id: number): string | undefined => {
    if (keyOf.has(id)) return keyOf.get(id);
    const frame = byId.get(id)?.callFrame;
    const bundled = frame?.url.replace(/^file:\/\//, '') ?? '';
    let key: string | undefined;
    if (frame && bundled !== '') {
      const { file, line } = original(bundled, frame.lineNumber, frame.columnNumber);
      const short = shortPath(file);
      if (short.startsWith('src/')) key = `${frame.functionName || '(anonymous)'} ${short}:${line}`;
    }
    keyOf.set(id, key);
    return key;
  };
  const inclusive = new Map<string, number>();
  profile.samples.forEach((leaf, i) => {
    const seen = new Set<string>();
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const key = serviceKey(id);
      if (key !== undefined) seen.add(key);
    }
    for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const rank = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => `  ${pct(us)}  ${name}`);
  return [
    `busy ${(total / 1e6).toFixed(1)} s of CPU (idle ${(idle / 1e6).toFixed(1)} s); shares of the busy time:`,
    'self time by package:',
    ...rank(byPackage, 14),
    'top frames by self time:',
    ...rank(byFunction, top),
    "the service's functions by inclusive time:",
    ...rank(inclusive, top),
  ];
}

const sourceMaps = new Map<string, SourceMap | undefined>();

/**
 * Where a frame is in the sources: the bundle is one minified line, so dist/server.mjs frames are
 * mapped back through its source map to src/ (or the bundled package's file) and line.
 */
function original(file: string, line: number, column: number): { file: string; line: number } {
  if (!sourceMaps.has(file)) {
    const map = `${file}.map`;
    sourceMaps.set(file, existsSync(map) ? new SourceMap(JSON.parse(readFileSync(map, 'utf8'))) : undefined);
  }
  const entry = sourceMaps.get(file)?.findEntry(line, column);
  if (entry && 'originalSource' in entry) {
    return { file: path.resolve(path.dirname(file), entry.originalSource.replace(/^file:\/\//, '')), line: entry.originalLine + 1 };
  }
  return { file, line: line + 1 };
}

function shortPath(file: string): string {
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) return file.slice(modules + 'node_modules/'.length);
  return path.relative(path.resolve(import.meta.dirname, '..'), file);
}

function packageOf(file: string, functionName: string): string {
  if (file === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (file.startsWith('node:')) return 'node internals';
  const modules = file.lastIndexOf('node_modules/');
  if (modules < 0) return `the service (${path.relative(path.resolve(import.meta.dirname, '..'), path.dirname(file))})`;
  const rest = file.slice(modules + 'node_modules/'.length).split('/');
  return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? '?');
}

async function drive(scenario: string, base: string): Promise<autocannon.Result> {
  let n = 0;
  if (scenario === 'submit') {
    return autocannon({
      url: `${base}/api/v1/tasks`,
      method: 'POST',
      duration: DURATION,
      connections: 50,
      headers: { 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({ task_type: 'data_collection', description: `Profiled submission ${n++}: count the benches.`, delivery: 'status_poll' }),
          }),
        },
      ],
    });
  }
  const task_id = await createTask(base, 'Profiled task: count the benches.');
  return autocannon({ url: `${base}/api/v1/tasks/${task_id}`, duration: DURATION, connections: 50 });
}

async function main(): Promise<void> {
  const scenario = process.argv[2] ?? 'read';
  // A profile already taken: summarize it again (npm run bench:profile -- bench/profiles/X.cpuprofile).
  if (scenario.endsWith('.cpuprofile')) {
    for (const line of summarizeProfile(JSON.parse(readFileSync(scenario, 'utf8')) as CpuProfile, 40)) process.stdout.write(`${line}\n`);
    return;
  }
  const store = process.argv[3] === 'postgres' ? 'postgres' : 'sqlite';
  if (!['read', 'submit', 'mail'].includes(scenario)) throw new Error('scenario: read, submit or mail');
  if (store === 'postgres' && !POSTGRES_URL) throw new Error('set DATABASE_URL or TEST_POSTGRES_URL for PostgreSQL');
  const profileDir = path.resolve(import.meta.dirname, '..', 'bench', 'profiles');
  // The default path (mail): the local DNS server and SMTP sink of bench/default-path.ts.
  const dns = scenario === 'mail' ? await startDnsServer() : undefined;
  const sink = scenario === 'mail' ? await startSmtpSink() : undefined;
  const started = Date.now();
  const statementTimes = store === 'sqlite' ? path.join(profileDir, `statements.${started}.json`) : undefined;
  const setup: { services: BenchService[]; base: string; stop: () => Promise<void> } = await startSetup({
    store,
    instances: Number(process.argv[4] ?? 1),
    extraFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...(statementTimes ? ['--import', path.join(import.meta.dirname, 'statement-times.mjs')] : [])],
    env: {
      ...(sink && dns ? defaultPathEnv(sink, dns.address) : {}),
      ...(statementTimes ? { BENCH_STATEMENT_TIMES: statementTimes, BENCH_SQLITE_DRIVER: SQLITE_DRIVER_PATH } : {}),
    },
  });
  try {
    if (sink) {
      const run = await defaultPathRun({ base: setup.base, sink, seconds: DURATION, connections: 50 }, `${setup.base}/api/v1/health`);
      process.stdout.write(
        `mail on ${store}: ${Math.round(run.rate)}/s, ${run.latency}, outbox behind at most ${run.lagSeconds.toFixed(1)} s, errors ${run.errors}\n`,
      );
    } else {
      const result = await drive(scenario, setup.base);
      const rate = scenario === 'submit' ? result['2xx'] / DURATION : result.requests.average;
      process.stdout.write(
        `${scenario} on ${store}: ${Math.round(rate)}/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}\n`,
      );
    }
  } finally {
    await setup.stop();
    sink?.stop();
    await dns?.close();
  }
  // One profile per thread of each service process (CPU.<date>.<time>.<pid>.<thread>.<seq>): the
  // event loop's (thread 0) first, then the checkpointer's and the mail thread's.
  const written = readdirSync(profileDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => ({ file: path.join(profileDir, f), thread: Number(f.split('.').at(-3)) }))
    .filter(({ file }) => statSync(file).mtimeMs >= started)
    .sort((a, b) => a.thread - b.thread || a.file.localeCompare(b.file));
  if (written.length === 0) throw new Error('no profile was written');
  const seconds = Math.round((Date.now() - started) / 1000);
  for (const { file, thread } of written) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const which = thread === 0 ? 'the event loop' : `worker thread ${thread}`;
    process.stdout.write(`\nprofile of ${which}: ${path.relative(process.cwd(), file)} (${seconds} s)\n`);
    for (const line of summarizeProfile(profile, thread === 0 ? 25 : 10)) process.stdout.write(`${line}\n`);
    if (thread === 0 && statementTimes && existsSync(statementTimes)) {
      const times = JSON.parse(readFileSync(statementTimes, 'utf8')) as StatementTime[];
      for (const line of summarizeStatements(times, selfTimes(profile).busy / 1000)) process.stdout.write(`${line}\n`);
    }
  }
}

await main();
