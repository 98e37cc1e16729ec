/**
 * A2A held requests (docs/a2a.md "Blocking and streams"; `npm run bench:a2a`, never in timed
 * tests): BENCH_A2A_HELD (default 2,000) requests held at once on one instance, half blocking
 * SendMessage calls (each the idempotent replay of a task's first message, so no quota is spent)
 * and half SubscribeToTask streams over JSON-RPC, spread over tasks of 20 each. Measures the
 * service's resident memory for all of them, then delivers the tasks one by one and checks that
 * every held send is answered with the completed task and every stream ends with its final status.
 * Target: all 2,000 held in ≤ 40 MB (about 20 KB each: socket, parser, request and waiter).
 * Exits 1 over the target or when a request is not answered as it should be.
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import { ADMIN_KEY, startSetup } from './service.js';

const HELD = Number(process.env.BENCH_A2A_HELD ?? 2000);
const PER_TASK = 20;
const TARGET_MB = 40;

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

/** One JSON-RPC request on its own connection; resolves with the whole answer once the server ends it. */
function held(base: string, agent: http.Agent, body: unknown): { sent: Promise<void>; answer: Promise<{ status: number; text: string }> } {
  let onSent: () => void = () => undefined;
  const sent = new Promise<void>((resolve) => (onSent = resolve));
  const answer = new Promise<{ status: number; text: string }>((resolve) => {
    const request = http.request(
      `${base}/a2a`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'a2a-version': '1.0', accept: 'application/json, text/event-stream' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    request.on('finish', onSent);
    request.on('error', () => resolve({ status: 0, text: '' }));
    request.end(JSON.stringify(body));
  });
  return { sent, answer };
}

async function rpc(base: string, method: string, params: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as Record<string, unknown>;
}

const message = (i: number) => ({
  message: { messageId: `bench-${i}`, role: 'ROLE_USER', parts: [{ text: `A2A benchmark task ${i}: count the benches in the park.` }] },
});

async function main(): Promise<void> {
  const running = await startSetup({ store: 'sqlite', instances: 1, env: { MAX_CONNECTIONS: String(HELD * 2 + 500) } });
  const failures: string[] = [];
  try {
    const { base } = running;
    const pid = running.services[0]?.process.pid ?? 0;
    const taskCount = Math.ceil(HELD / PER_TASK);
    const ids: string[] = [];
    for (let i = 0; i < taskCount; i++) {
      const answer = await rpc(base, 'SendMessage', { ...message(i), configuration: { returnImmediately: true } });
      ids.push(((answer.result as Record<string, unknown>).task as Record<string, unknown>).id as string);
    }
    const before = rssKb(pid);
    const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
    const sends: ReturnType<typeof held>[] = [];
    const streams: ReturnType<typeof held>[] = [];
    for (let i = 0; i < HELD; i++) {
      const task = i % taskCount;
      if (i % 2 === 0) sends.push(held(base, agent, { jsonrpc: '2.0', id: i, method: 'SendMessage', params: message(task) }));
      else streams.push(held(base, agent, { jsonrpc: '2.0', id: i, method: 'SubscribeToTask', params: { id: ids[task] } }));
      if (i % 200 === 199) await Promise.all([...sends.slice(-100), ...streams.slice(-100)].map((h) => h.sent));
    }
    await Promise.all([...sends, ...streams].map((h) => h.sent));
    // Let the service parse and park every request before measuring it.
    await new Promise((resolve) => setTimeout(resolve, 1500 + HELD));
    const during = rssKb(pid);
    const mb = (during - before) / 1024;
    process.stdout.write(
      `A2A held: ${sends.length} blocking sends + ${streams.length} streams on ${taskCount} tasks; service RSS ${Math.round(before / 1024)} → ${Math.round(during / 1024)} MB = +${mb.toFixed(1)} MB, ${((during - before) / HELD).toFixed(1)} KB each (target ≤ ${TARGET_MB} MB)\n`,
    );
    if (mb > TARGET_MB) failures.push('memory of the held A2A requests');

    for (const id of ids) {
      for (const body of [{ status: 'accepted' }, { status: 'delivered', operator_notes: 'Twelve benches.' }]) {
        const res = await fetch(`${base}/api/v1/admin/tasks/${id}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
          body: JSON.stringify(body),
        });
        await res.arrayBuffer();
      }
    }
    const sendAnswers = await Promise.all(sends.map((h) => h.answer));
    const streamAnswers = await Promise.all(streams.map((h) => h.answer));
    agent.destroy();
    const badSends = sendAnswers.filter((a) => a.status !== 200 || !a.text.includes('TASK_STATE_COMPLETED')).length;
    const badStreams = streamAnswers.filter((a) => a.status !== 200 || !/TASK_STATE_COMPLETED"[^\n]*\n\n$/.test(a.text)).length;
    process.stdout.write(`released by the deliveries: sends not answered COMPLETED: ${badSends}; streams not ended at COMPLETED: ${badStreams}\n`);
    if (badSends > 0) failures.push('blocking sends not released');
    if (badStreams > 0) failures.push('streams not ended');
  } finally {
    await running.stop();
  }
  if (failures.length > 0) {
    process.stdout.write(`FAILED: ${failures.join(', ')}\n`);
    process.exitCode = 1;
  }
}

await main();
