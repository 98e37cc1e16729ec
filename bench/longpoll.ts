/**
 * Scenario "held long-polls" (docs/waiting.md): BENCH_WAITERS (default 2,000) requests held at once on one
 * instance with If-None-Match + Prefer: wait=60, spread over tasks of 20 waiters each. Measures
 * the service's resident memory per held request, then changes the tasks one by one and measures
 * how long each waiter takes to be answered after its task changed (p50/p99).
 * Targets: ≤ 64 KB per held request (socket, parser and request objects included); wake-up p99
 * ≤ 50 ms (docs/performance.md); every waiter answered 200 with the changed task.
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createTask, taskToWatch } from './service.js';

export interface LongPollOptions {
  base: string;
  pid: number;
  adminKey: string;
  waiters: number;
}

export interface LongPollResult {
  lines: string[];
  failures: string[];
}

const PER_TASK = 20;

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

interface Held {
  taskIndex: number;
  sent: Promise<void>;
  answered: Promise<{ status: number; at: number }>;
}

/** One held request on its own connection (held requests cannot share one). */
function hold(base: string, taskId: string, etag: string, agent: http.Agent, taskIndex: number): Held {
  let onSent: () => void = () => undefined;
  const sent = new Promise<void>((resolve) => (onSent = resolve));
  const answered = new Promise<{ status: number; at: number }>((resolve) => {
    const request = http.get(`${base}/api/v1/tasks/${taskId}`, { agent, headers: { 'if-none-match': etag, prefer: 'wait=60' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, at: performance.now() }));
    });
    request.on('finish', onSent);
    request.on('error', () => resolve({ status: 0, at: performance.now() }));
  });
  return { taskIndex, sent, answered };
}

export async function benchLongPoll(options: LongPollOptions): Promise<LongPollResult> {
  const { base, pid, adminKey, waiters } = options;
  const lines: string[] = [];
  const failures: string[] = [];
  const taskCount = Math.ceil(waiters / PER_TASK);
  const tasks: { id: string; etag: string }[] = [];
  for (let i = 0; i < taskCount; i++) tasks.push(await taskToWatch(base, `Long-poll benchmark task ${i}: count the benches.`));

  // Warm the change path up first, as the other scenarios warm theirs: the first PATCH of the
  // process compiles its code and its queries (about 50 ms on PostgreSQL here), and with 20
  // waiters per change one cold change alone would be the p99.
  const warmUpId = await createTask(base, 'Long-poll benchmark warm-up task: count the benches.');
  for (const body of [{ status: 'accepted' }, { operator_notes: 'Warming up.' }, { operator_notes: 'Warming up again.' }]) {
    const res = await fetch(`${base}/api/v1/admin/tasks/${warmUpId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
  }

  const before = rssKb(pid);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const held: Held[] = [];
  for (let i = 0; i < waiters; i++) {
    const taskIndex = i % taskCount;
    const task = tasks[taskIndex] as { id: string; etag: string };
    held.push(hold(base, task.id, task.etag, agent, taskIndex));
    // Open connections in small batches so the listen backlog never overflows.
    if (i % 200 === 199) await Promise.all(held.slice(-200).map((h) => h.sent));
  }
  await Promise.all(held.map((h) => h.sent));
  // Let the service parse and park every request before measuring it.
  await new Promise((r) => setTimeout(r, 1500 + waiters));
  const during = rssKb(pid);
  const perWaiterKb = (during - before) / waiters;
  lines.push(
    `held long-polls: ${waiters} on ${taskCount} tasks; service RSS ${Math.round(before / 1024)} → ${Math.round(during / 1024)} MB = ${perWaiterKb.toFixed(1)} KB per held request (target ≤ 64 KB)`,
  );
  if (perWaiterKb > 64) failures.push('memory per held request');

  // Change the tasks one at a time; each change must wake its own waiters only.
  const latencies: number[] = [];
  let wrong = 0;
  for (let i = 0; i < taskCount; i++) {
    const task = tasks[i] as { id: string };
    const mine = held.filter((h) => h.taskIndex === i);
    const changedAt = performance.now();
    const patch = await fetch(`${base}/api/v1/admin/tasks/${task.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({ status: 'accepted' }),
    });
    await patch.arrayBuffer();
    for (const answer of await Promise.all(mine.map((h) => h.answered))) {
      if (answer.status !== 200) wrong += 1;
      latencies.push(answer.at - changedAt);
    }
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  lines.push(`long-poll wake-up after a change: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target p99 ≤ 50 ms); not 200: ${wrong}`);
  if (!(p99 <= 50)) failures.push('long-poll wake-up p99');
  if (wrong > 0) failures.push('long-polls not answered 200');
  return { lines, failures };
}
