/**
 * Issue 53: what verifying a Web Bot Auth signature costs a request once the agent's key directory
 * is cached (the common case: one fetch a minute at most per directory host). In process: the
 * service's own verifier (src/abuse/agent-signatures.ts) over requests signed beforehand with
 * Cloudflare's web-bot-auth package, each with its own nonce, its directory served on loopback
 * and fetched once. Target: ≤ 200 µs per verification (docs/verified-agents.md).
 * Run alone: `tsx bench/agents.ts` (or BENCH_ONLY=agents npm run bench).
 */
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { AgentDirectories } from '../src/abuse/agent-directories.js';
import { AgentVerifier } from '../src/abuse/agent-signatures.js';
import type { Store } from '../src/store/db.js';
import { createTargetResolver } from '../src/webhooks/target.js';
import { newAgent, signedHeaders, startDirectory } from '../test/support/agents.js';

export const AGENT_VERIFY_TARGET_US = 200;
const BASE = 'http://localhost:8080';

export async function benchAgentVerification(count = 3000): Promise<number> {
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
    const started = performance.now();
    for (const request of measured) await verifier.verify(request);
    return ((performance.now() - started) * 1000) / measured.length;
  } finally {
    await directory.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const us = await benchAgentVerification();
  process.stdout.write(`agent signature verification (cached directory): ${us.toFixed(1)} µs per request (target ≤ ${AGENT_VERIFY_TARGET_US} µs)\n`);
  if (!(us <= AGENT_VERIFY_TARGET_US)) process.exit(1);
}
