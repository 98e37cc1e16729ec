/**
 * Scenario "crowd of keys" (issue 53, docs/verified-agents.md#cost): BENCH_CROWD (default 3,000)
 * distinct verified agents cost the service no more than as many distinct addresses. Submissions
 * (status_poll) one per client, then status reads two per client, 10 at a time, each on its own
 * connection from a fresh loopback address (127.20.0.0 onwards, as bench/crowd.ts), so the only
 * difference is whether the client is an address or a key:
 *   - unsigned, every client a new address;
 *   - signed with web-bot-auth (Cloudflare's package), every client a new key (a new counter, a
 *     new nonce per request), its directory cached (one of ⌈N/99⌉ directories on loopback, each
 *     on its own port, since fetches are bounded per host:port; each fetched once before).
 * Signatures are made beforehand, outside the timing. Target: keys/addresses ≤ 1.5× for both.
 * Needs the service started with WEBHOOK_ALLOW_PRIVATE=true (loopback directories) and BASE_URL
 * CROWD_AGENTS_BASE_URL (the authority signed).
 */
import { readFileSync } from 'node:fs';
import { type DirectoryServer, newAgent, signedHeaders, startDirectory, type TestAgent } from '../test/support/agents.js';
import { type CrowdResult, crowdAddress, send, timed } from './crowd.js';
import { taskToWatch } from './service.js';

export const CROWD_AGENTS_BASE_URL = 'http://localhost:8080';
export const CROWD_AGENTS_TARGET = 1.5;
/** Keys per directory, with its warm-up key the 100 a directory may list (src/abuse/agent-directories.ts). */
const KEYS_PER_DIRECTORY = 99;

export interface CrowdAgentsOptions {
  base: string;
  clients: number;
  /** First crowdAddress index this scenario may use (the others' addresses stay unused). */
  firstAddress: number;
  /** The service's process: its CPU time per phase is printed beside the wall times (the machine may be shared). */
  pid?: number | undefined;
}

/** CPU time (user + system) a process has used so far, in ms; 0 where /proc cannot say. */
function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** Runs `phase` and answers its result with the service's CPU time over it. */
async function withCpu<T>(pid: number | undefined, phase: () => Promise<T>): Promise<T & { cpuMs: number }> {
  const before = cpuMsOf(pid);
  const result = await phase();
  return { ...result, cpuMs: cpuMsOf(pid) - before };
}

const cpuLine = (label: string, byAddress: { cpuMs: number }, byKey: { cpuMs: number }, count: number) =>
  byAddress.cpuMs > 0
    ? `; service CPU ${label}: addresses ${((byAddress.cpuMs * 1000) / count).toFixed(0)} µs, keys ${((byKey.cpuMs * 1000) / count).toFixed(0)} µs per request = ${(byKey.cpuMs / byAddress.cpuMs).toFixed(2)}×`
    : '';

export async function benchCrowdAgents(options: CrowdAgentsOptions): Promise<CrowdResult> {
  const { base, clients, firstAddress, pid } = options;
  const lines: string[] = [];
  const failures: string[] = [];
  const agents: TestAgent[] = await Promise.all(Array.from({ length: clients }, () => newAgent()));
  const directories: DirectoryServer[] = [];
  const directoryOf: DirectoryServer[] = [];
  try {
    for (let from = 0; from < clients; from += KEYS_PER_DIRECTORY) {
      const warm = await newAgent();
      const directory = await startDirectory([...agents.slice(from, from + KEYS_PER_DIRECTORY), warm]);
      directories.push(directory);
      for (let i = from; i < Math.min(clients, from + KEYS_PER_DIRECTORY); i++) directoryOf[i] = directory;
      // Fetched once now, by a key that is not measured: the measured keys are new, their directory cached.
      const warmUp = await fetch(`${base}/api/v1/services`, {
        headers: await signedHeaders(warm, directory.url, CROWD_AGENTS_BASE_URL, 'GET', '/api/v1/services', new Date()),
      });
      const answer = await warmUp.text();
      if (warmUp.status !== 200) throw new Error(`crowd of keys: warming a directory answered ${warmUp.status} ${answer}`);
    }
    const sign = (i: number, method: string, path: string) =>
      signedHeaders(agents[i] as TestAgent, (directoryOf[i] as DirectoryServer).url, CROWD_AGENTS_BASE_URL, method, path, new Date(), {
        expires: new Date(Date.now() + 300_000),
      });

    let n = 0;
    const body = () =>
      JSON.stringify({ task_type: 'data_collection', description: `Crowd-of-keys submission ${n++}: count the benches.`, delivery: 'status_poll' });
    const submit = (localAddress: string, headers: Record<string, string>) =>
      send(`${base}/api/v1/tasks`, { localAddress, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body() });

    // Submissions, one per client: addresses, then keys (signed beforehand). The service is warm
    // (the address crowd ran just before on it).
    const signed = await Promise.all(Array.from({ length: clients }, (_, i) => sign(i, 'POST', '/api/v1/tasks')));
    const measured = {
      byAddress: await withCpu(pid, () => timed(clients, 10, (i) => submit(crowdAddress(firstAddress + i), {}))),
      byKey: await withCpu(pid, () => timed(clients, 10, (i) => submit(crowdAddress(firstAddress + clients + i), signed[i] as Record<string, string>))),
    };
    const submitRatio = measured.byKey.ms / measured.byAddress.ms;
    lines.push(
      `crowd of keys, submissions: ${clients} from ${clients} addresses ${Math.round(measured.byAddress.ms)} ms, from ${clients} keys ${Math.round(measured.byKey.ms)} ms = ${submitRatio.toFixed(2)}× (target ≤ ${CROWD_AGENTS_TARGET}×); errors ${measured.byAddress.bad + measured.byKey.bad}${cpuLine('per submission', measured.byAddress, measured.byKey, clients)}`,
    );
    if (!(submitRatio <= CROWD_AGENTS_TARGET)) failures.push('crowd of keys: submission ratio');
    if (measured.byAddress.bad + measured.byKey.bad > 0) failures.push('crowd of keys: submissions had errors');

    // Status reads of one task, two per client.
    const { id } = await taskToWatch(base, 'Crowd-of-keys read task: count the benches.');
    const path = `/api/v1/tasks/${id}`;
    const readFrom = firstAddress + 2 * clients;
    const signedReads = await Promise.all(Array.from({ length: clients * 2 }, (_, i) => sign(i % clients, 'GET', path)));
    const byAddress = await withCpu(pid, () => timed(clients * 2, 10, (i) => send(`${base}${path}`, { localAddress: crowdAddress(readFrom + (i % clients)) })));
    const byKey = await withCpu(pid, () =>
      timed(clients * 2, 10, (i) =>
        send(`${base}${path}`, { localAddress: crowdAddress(readFrom + clients + (i % clients)), headers: signedReads[i] as Record<string, string> }),
      ),
    );
    const readRatio = byKey.ms / byAddress.ms;
    lines.push(
      `crowd of keys, reads: ${clients * 2} from ${clients} addresses ${Math.round(byAddress.ms)} ms, from ${clients} keys ${Math.round(byKey.ms)} ms = ${readRatio.toFixed(2)}× (target ≤ ${CROWD_AGENTS_TARGET}×); errors ${byAddress.bad + byKey.bad}; directory fetches ${directories.reduce((sum, d) => sum + d.requests.length, 0)} for ${directories.length} directories${cpuLine('per read', byAddress, byKey, clients * 2)}`,
    );
    if (!(readRatio <= CROWD_AGENTS_TARGET)) failures.push('crowd of keys: read ratio');
    if (byAddress.bad + byKey.bad > 0) failures.push('crowd of keys: reads had errors');
    return { lines, failures };
  } finally {
    await Promise.all(directories.map((d) => d.close()));
  }
}
