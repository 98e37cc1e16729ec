/**
 * CPU profile of one benchmark scenario (npm run bench:profile -- <read|submit|mail> [sqlite|postgres] [instances]):
 * starts the service as `npm start` does plus --cpu-prof, drives the scenario with autocannon for
 * BENCH_SECONDS (default 10), stops the service and prints the top frames by self time, grouped
 * by function and by package, with the profile's path (open it in Chrome DevTools or speedscope
 * for the flame graph). PostgreSQL needs DATABASE_URL or TEST_POSTGRES_URL.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { startDnsServer } from '../test/support/dns-server.js';
import { defaultPathEnv, defaultPathRun, startSmtpSink } from './default-path.js';
import { type BenchService, POSTGRES_URL, startSetup } from './service.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const DURATION = Math.max(1, Number(process.env.BENCH_SECONDS ?? 10));

/** Self time per function and per package (node_modules/<name>, node: internals, the service). */
export function summarizeProfile(profile: CpuProfile, top = 25): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const file = frame.url.replace(/^file:\/\//, '');
    const where = file === '' ? '' : ` ${shortPath(file)}:${frame.lineNumber + 1}`;
    const key = `${frame.functionName || '(anonymous)'}${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const pkg = packageOf(file, frame.functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const rank = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => `  ${pct(us)}  ${name}`);
  return ['self time by package:', ...rank(byPackage, 12), 'top frames by self time:', ...rank(byFunction, top)];
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
  if (modules < 0) return 'the service (dist/server.mjs)';
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
  const created = await fetch(`${base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ task_type: 'data_collection', description: 'Profiled task: count the benches.', delivery: 'status_poll' }),
  });
  const { task_id } = (await created.json()) as { task_id: string };
  return autocannon({ url: `${base}/api/v1/tasks/${task_id}`, duration: DURATION, connections: 50 });
}

async function main(): Promise<void> {
  const scenario = process.argv[2] ?? 'read';
  const store = process.argv[3] === 'postgres' ? 'postgres' : 'sqlite';
  if (!['read', 'submit', 'mail'].includes(scenario)) throw new Error('scenario: read, submit or mail');
  if (store === 'postgres' && !POSTGRES_URL) throw new Error('set DATABASE_URL or TEST_POSTGRES_URL for PostgreSQL');
  const profileDir = path.resolve(import.meta.dirname, '..', 'bench', 'profiles');
  // The default path (mail): the local DNS server and SMTP sink of bench/default-path.ts.
  const dns = scenario === 'mail' ? await startDnsServer() : undefined;
  const sink = scenario === 'mail' ? await startSmtpSink() : undefined;
  const setup: { services: BenchService[]; base: string; stop: () => Promise<void> } = await startSetup({
    store,
    instances: Number(process.argv[4] ?? 1),
    extraFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
    env: sink && dns ? defaultPathEnv(sink, dns.address) : {},
  });
  const started = Date.now();
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
  const newest = readdirSync(profileDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(profileDir, f))
    .sort()
    .at(-1);
  if (!newest) throw new Error('no profile was written');
  const profile = JSON.parse(readFileSync(newest, 'utf8')) as CpuProfile;
  process.stdout.write(`profile: ${path.relative(process.cwd(), newest)} (${Math.round((Date.now() - started) / 1000)} s)\n`);
  for (const line of summarizeProfile(profile)) process.stdout.write(`${line}\n`);
}

await main();
