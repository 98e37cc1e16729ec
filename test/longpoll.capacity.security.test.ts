import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxHeldFor } from '../src/services/waiting/task-waits.js';
import { postJson, startTestApp, type TestApp, validTask } from './support/app.js';

/**
 * Capacity for health and the operator (issue 34, item 3): with MAX_CONNECTIONS reached by
 * long-polls, every health probe and status read was 503 for the whole hold. Held requests take at
 * most a share of the connections (past it a poll is answered at once with the current status),
 * and health, readiness and the console still answer in the headroom past the cap.
 */

const MAX = 8;

interface Raw {
  socket: Socket;
  received: () => string;
}

function open(port: number, localAddress: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => text }));
    socket.once('error', reject);
  });
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return check();
}

describe('long-polls filling MAX_CONNECTIONS', () => {
  let t: TestApp;
  let port: number;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    t = await startTestApp({ env: { MAX_CONNECTIONS: String(MAX), MAX_CONNECTIONS_PER_ADDRESS: '100' } });
    port = Number(new URL(t.url).port);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await t.close();
  });

  it('hold at most their share; the others are answered at once; health, readiness and the console still answer', async () => {
    const submitted = await postJson(`${t.url}/api/v1/tasks`, validTask(), { connection: 'close' });
    const { task_id } = (await submitted.json()) as { task_id: string };
    const read = await fetch(`${t.url}/api/v1/tasks/${task_id}`, { headers: { connection: 'close' } });
    const etag = read.headers.get('etag') ?? '';
    await read.arrayBuffer();
    await until(() => t.deps.waits.size === 0, 1000);

    const poll = `GET /api/v1/tasks/${task_id} HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: ${etag}\r\nPrefer: wait=30\r\n\r\n`;
    const polls: Raw[] = [];
    for (let i = 0; i < MAX; i += 1) {
      const raw = await open(port, `127.0.1.${i + 1}`);
      sockets.push(raw.socket);
      raw.socket.write(poll);
      polls.push(raw);
    }
    const share = maxHeldFor(MAX);
    expect(await until(() => t.deps.waits.size === share && polls.filter((p) => p.received() !== '').length === MAX - share, 5000)).toBe(true);
    // Past the share: the current status at once (304: the poller's ETag is current), the wait not applied.
    for (const answered of polls.filter((p) => p.received() !== '')) {
      expect(answered.received()).toMatch(/^HTTP\/1\.1 304/);
      expect(answered.received()).toMatch(/retry-after: 5/i);
      expect(answered.received()).not.toMatch(/\r\npreference-applied:/i);
    }

    // Every ordinary slot is taken (MAX sockets open): an ordinary read is refused...
    const reader = await open(port, '127.0.2.1');
    sockets.push(reader.socket);
    reader.socket.write(`GET /api/v1/tasks/${task_id} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(await until(() => reader.received() !== '', 3000)).toBe(true);
    expect(reader.received()).toMatch(/^HTTP\/1\.1 503/);
    // ...but health, readiness and the console answer (one at a time: the headroom is a quarter of the cap).
    for (const [i, path] of ['/api/v1/health', '/api/v1/health/ready', '/operator'].entries()) {
      const probe = await open(port, `127.0.3.${i + 1}`);
      sockets.push(probe.socket);
      probe.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      expect(await until(() => probe.socket.readableEnded || probe.socket.destroyed, 3000)).toBe(true);
      expect(probe.received()).not.toContain('Too many open connections');
      if (path === '/api/v1/health') expect(probe.received()).toMatch(/^HTTP\/1\.1 200/);
    }
  });
});
