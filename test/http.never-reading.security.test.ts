import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

/**
 * Connections that never read (issue 34, item 4): 20 sockets pipelining 50 × GET /openapi.json
 * and reading nothing stayed open for minutes with tens of MB in the server's send queues. A
 * connection whose output has not drained for IDLE_TIMEOUT_MS is closed, and the requests one
 * connection may have pipelined are bounded.
 */

const IDLE_MS = 1000;

function openSocket(port: number, localAddress: string): Promise<{ socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      // Never read: the socket stays paused, so the kernel buffers fill and the server's output stalls.
      socket.pause();
      resolve({ socket });
    });
    socket.once('error', reject);
  });
}

/**
 * The server's open connections, polled until they are at most `count` (a client that never reads
 * never sees its connection end, so the server is asked). Returns what was left after `ms`.
 */
async function serverConnectionsDownTo(t: TestApp, count: number, ms: number): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const open = await new Promise<number>((resolve, reject) => t.app.server.getConnections((error, n) => (error ? reject(error) : resolve(n))));
    if (open <= count || Date.now() > until) return open;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('clients that pipeline requests and never read', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { IDLE_TIMEOUT_MS: String(IDLE_MS), KEEP_ALIVE_TIMEOUT_MS: '60000' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('are closed when 20 of them pipeline 50 × GET /openapi.json, and the service keeps answering', async () => {
    const port = Number(new URL(t.url).port);
    const before = await serverConnectionsDownTo(t, 0, 0);
    const clients = await Promise.all(Array.from({ length: 20 }, (_, i) => openSocket(port, `127.0.0.${10 + (i % 5)}`)));
    const request = 'GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(50);
    for (const { socket } of clients) socket.write(request);
    const left = await serverConnectionsDownTo(t, before, IDLE_MS + 8000);
    for (const { socket } of clients) socket.destroy();
    expect(left).toBeLessThanOrEqual(before);
    expect((await fetch(`${t.url}/api/v1/health`, { headers: { connection: 'close' } })).status).toBe(200);
  });

  it('are closed once their output has not drained for IDLE_TIMEOUT_MS, pipelining within the bound', async () => {
    const port = Number(new URL(t.url).port);
    const before = await serverConnectionsDownTo(t, 0, 0);
    // Node's own socket timeout out of the picture (it did not hold in the field): the service's
    // bound alone must close the connection.
    const nodeTimeout = t.app.server.timeout;
    t.app.server.timeout = 0;
    // The server's side of the connection, to stop feeding as soon as its output waits.
    const accepted = new Promise<Socket>((resolve) => t.app.server.once('connection', resolve));
    const { socket } = await openSocket(port, '127.0.0.15');
    const served = await accepted;
    // Small batches, each answered before the next, until the kernel's buffers are full and the
    // server's output waits: from then on nothing more is sent (the pipelining bound stays out of it).
    const batch = 'GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(4);
    let stalledAt: number | undefined;
    for (let round = 0; round < 2000 && stalledAt === undefined; round += 1) {
      socket.write(batch);
      await new Promise((r) => setTimeout(r, 20));
      if (served.writableLength > 0) stalledAt = Date.now();
    }
    expect(stalledAt).toBeDefined();
    const left = await serverConnectionsDownTo(t, before, IDLE_MS + 8000);
    socket.destroy();
    t.app.server.timeout = nodeTimeout;
    expect(left).toBeLessThanOrEqual(before);
    expect(Date.now() - (stalledAt ?? 0)).toBeGreaterThanOrEqual(IDLE_MS - 100);
  });

  it('may pipeline only a bounded number of requests on one connection', async () => {
    const port = Number(new URL(t.url).port);
    const before = await serverConnectionsDownTo(t, 0, 0);
    const { socket } = await openSocket(port, '127.0.0.20');
    socket.write('GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(500));
    // Well before any idle or keep-alive timeout.
    const left = await serverConnectionsDownTo(t, before, 3000);
    socket.destroy();
    expect(left).toBeLessThanOrEqual(before);
  });
});
