import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { signIn } from './console.support.js';
import { heldCount } from './longpoll.support.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

/**
 * Issue 34, item 2: waiting clients never starve the others. 3,000 long-polls and 100 console
 * streams held from distinct loopback addresses: health answers, an operator's change reaches its
 * waiters and every stream, and every other poll is released unchanged when its wait ends. The
 * timing targets (health p99, release within 1 s of the wait) are the benchmark's crowd scenario.
 */

const POLLS = 3000;
const STREAMS = 100;
const PER_TASK = 20;
/** Long enough for all 3,000 to be sent and held at once (sending them takes several seconds here). */
const WAIT_SECONDS = 10;
/**
 * The changed task's polls wait the longest the contract allows: they are released by the change,
 * which comes after every poll is held and health is read. With 10 s, a machine busy enough to
 * take that long released them unchanged first (304), and the test failed without a fault.
 */
const CHANGED_WAIT_SECONDS = 60;

interface Answer {
  status: number;
  etag: string | undefined;
}

/** One GET from its own loopback address; resolves with the answer. */
function getFrom(base: string, path: string, localAddress: string, headers: Record<string, string>): { sent: Promise<void>; answer: Promise<Answer> } {
  let onSent: () => void = () => undefined;
  const sent = new Promise<void>((resolve) => (onSent = resolve));
  const answer = new Promise<Answer>((resolve) => {
    const request = http.get(`${base}${path}`, { localAddress, agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag }));
    });
    request.on('finish', onSent);
    request.on('error', () => resolve({ status: 0, etag: undefined }));
  });
  return { sent, answer };
}

/** An SSE stream from its own address: resolves `hello` at its first event, `change` at a change naming `taskId`. */
function streamFrom(base: string, cookie: string, localAddress: string, taskId: () => string) {
  let text = '';
  let request: http.ClientRequest | undefined;
  let onHello: () => void = () => undefined;
  let onChange: () => void = () => undefined;
  const hello = new Promise<void>((resolve) => (onHello = resolve));
  const change = new Promise<void>((resolve) => (onChange = resolve));
  request = http.get(`${base}/operator/events`, { localAddress, agent: false, headers: { cookie } }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('event: hello')) onHello();
      if (text.includes('event: change') && text.includes(taskId())) onChange();
    });
  });
  request.on('error', () => undefined);
  return { hello, change, close: () => request?.destroy() };
}

const address = (group: number, n: number) => `127.${group}.${(n >> 8) & 255}.${n & 255 || 1}`;

describe.each(STORES)('3,000 long-polls and 100 console streams from distinct addresses on %s', (store) => {
  const t = useTestApp({ store });

  it('keep health answering, carry a change to its waiters and streams, and release every other poll when its wait ends', async () => {
    const tasks: { id: string; etag: string }[] = [];
    for (let i = 0; i < POLLS / PER_TASK; i++) {
      const created = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
      const { task_id } = (await created.json()) as { task_id: string };
      const read = await fetch(`${t.url}/api/v1/tasks/${task_id}`);
      await read.arrayBuffer();
      tasks.push({ id: task_id, etag: read.headers.get('etag') ?? '' });
    }
    const changed = tasks[0] as { id: string; etag: string };

    const { cookie } = await signIn(t);
    const streams = Array.from({ length: STREAMS }, (_, i) => streamFrom(t.url, cookie, address(1, i + 1), () => changed.id));
    await Promise.all(streams.map((s) => s.hello));

    const polls: { task: number; sent: Promise<void>; answer: Promise<Answer> }[] = [];
    for (let i = 0; i < POLLS; i++) {
      const task = i % tasks.length;
      const { id, etag } = tasks[task] as { id: string; etag: string };
      polls.push({
        task,
        ...getFrom(t.url, `/api/v1/tasks/${id}`, address(2 + (i >> 16), (i & 0xffff) + 1), {
          'if-none-match': etag,
          prefer: `wait=${task === 0 ? CHANGED_WAIT_SECONDS : WAIT_SECONDS}`,
        }),
      });
      // Connections in small batches, so the listen backlog never overflows.
      if (i % 200 === 199) await Promise.all(polls.slice(-200).map((p) => p.sent));
    }
    await heldCount(t, POLLS, 15_000);

    // Health answers while they are held.
    for (let i = 0; i < 10; i++) {
      const health = await fetch(`${t.url}/api/v1/health`);
      await health.arrayBuffer();
      expect(health.status).toBe(200);
    }

    // A change reaches its own waiters (200, the new representation) and every console stream.
    const patch = await fetch(`${t.url}/api/v1/admin/tasks/${changed.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_ADMIN_KEY}` },
      body: JSON.stringify({ status: 'accepted' }),
    });
    expect(patch.status).toBe(200);
    await Promise.all(streams.map((s) => s.change));
    for (const s of streams) s.close();

    const answers = await Promise.all(polls.map(async (p) => ({ task: p.task, ...(await p.answer) })));
    const woken = answers.filter((a) => a.task === 0);
    expect(woken).toHaveLength(PER_TASK);
    for (const a of woken) expect([a.status, a.etag === changed.etag]).toEqual([200, false]);
    // Every other poll: released unchanged when its wait ended, with the ETag it knew.
    const others = answers.filter((a) => a.task !== 0);
    const wrong = others.filter((a) => a.status !== 304 || a.etag !== tasks[a.task]?.etag);
    expect(wrong.slice(0, 3)).toEqual([]);
    expect(t.deps.waits.size).toBe(0);
  }, 90_000);
});
