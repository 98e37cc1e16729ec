/**
 * Issue 53: what verifying a Web Bot Auth signature costs a request once the agent's key directory
 * is cached (the common case: one fetch a minute at most per directory host). In process: the
 * service's own verifier (src/abuse/agent-signatures.ts) over requests signed beforehand with
 * Cloudflare's web-bot-auth package, each with its own nonce, its directory served on loopback
 * and fetched once. Target: ≤ 200 µs per verification (docs/verified-agents.md).
 * Run alone: `tsx bench/agents.ts` (or BENCH_ONLY=agents npm run bench).
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { AgentDirectories } from '../src/abuse/agent-directories.js';
import { AgentVerifier } from '../src/abuse/agent-signatures.js';
import type { Store } from '../src/store/db.js';
import { createTargetResolver } from '../src/webhooks/target.js';
import { newAgent, signedHeaders, startDirectory } from '../test/support/agents.js';

export const AGENT_VERIFY_TARGET_US = 200;
const BASE = 'http://localhost:8080';

/** Per verification: wall time, and the process's CPU time (user + system) over the same loop. */
export interface AgentVerificationCost {
  wallUs: number;
  cpuUs: number;
  /** CPU time of the Ed25519 check alone (node:crypto's one-shot verify), in the same run: the floor. */
  ed25519CpuUs: number;
}

export async function benchAgentVerification(count = 3000): Promise<AgentVerificationCost> {
  const agents = await Promise.all(Array.from({ length: 10 }, () => newAgent()));
  const directory = await startDirectory(agents);
  const clock = { now: () => new Date() };
  const log = pino({ level: 'silent' });
  const directories = new AgentDirectories({ resolveTarget: createTargetResolver({ dnsServers: [], dnsTimeoutMs: 1000, allowPrivate: true }), clock, log });
  const verifier = new AgentVerifier({ baseUrl: BASE, store: { dialect: 'sqlite' } as Store, clock, log, directories });
  try {
    const requests = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const headers = await signedHeaders(agents[i % agents.length]!, directory.url, BASE, 'GET', '/api/v1/services', new Date());
        return { method: 'GET', url: '/api/v1/services', rawHeaders: ['host', 'localhost:8080', ...Object.entries(headers).flat()] };
      }),
    );
    // Warm up: the directory fetch, and the code paths.
    for (const request of requests.slice(0, 200)) await verifier.verify(request);
    const measured = requests.slice(200);
    // CPU time as well as wall time: on a shared machine the wall time also counts other processes' turns.
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const request of measured) await verifier.verify(request);
    const wallUs = ((performance.now() - started) * 1000) / measured.length;
    const used = process.cpuUsage(cpu);
    return { wallUs, cpuUs: (used.user + used.system) / measured.length, ed25519CpuUs: ed25519Floor(measured.length) };
  } finally {
    await directory.close();
  }
}

/** CPU µs of one Ed25519 verification by node:crypto (OpenSSL), over `count` of them. */
function ed25519Floor(count: number): number {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const data = Buffer.alloc(200, 'a');
  const signature = sign(null, data, privateKey);
  for (let i = 0; i < 100; i++) verify(null, data, publicKey, signature);
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) verify(null, data, publicKey, signature);
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / count;
}

export function describeAgentVerification(cost: AgentVerificationCost): string {
  return `agent signature verification (cached directory): ${cost.cpuUs.toFixed(1)} µs CPU, ${cost.wallUs.toFixed(1)} µs wall per request (target ≤ ${AGENT_VERIFY_TARGET_US} µs CPU); of which the Ed25519 check alone ${cost.ed25519CpuUs.toFixed(1)} µs CPU`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cost = await benchAgentVerification(Number(process.env.BENCH_AGENT_VERIFICATIONS ?? 3000));
  process.stdout.write(`${describeAgentVerification(cost)}\n`);
  if (!(cost.cpuUs <= AGENT_VERIFY_TARGET_US)) process.exit(1);
}
