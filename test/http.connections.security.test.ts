import type { Socket } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { installConnectionLimits, serverTimeoutOptions } from '../src/http/connections/connections.js';
import { installPipeline } from '../src/http/pipeline.js';
import { startTestApp, type TestApp } from './support/app.js';
import { openRaw } from './support/net.js';

/**
 * Slow and silent clients, and floods of sockets (issue 15, defect 3): a body that never arrives
 * is closed within the request timeout, a trickled body too, and connections over the caps are
 * refused with a 503 instead of exhausting file descriptors.
 */

const open = openRaw;

const request = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;

describe('request and header timeouts', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({ env: { REQUEST_TIMEOUT_MS: '1500', HEADERS_TIMEOUT_MS: '1000', KEEP_ALIVE_TIMEOUT_MS: '1000' } });
    port = Number(new URL(t.url).port);
  });
  afterAll(async () => {
    await t.close();
  });

  it('closes a connection whose announced body never arrives within the request timeout', async () => {
    const { socket, closed } = await open(port);
    socket.write('POST /api/v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n');
    const { text, ms } = await closed;
    expect(ms).toBeLessThan(6000);
    expect(text).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a connection trickling its body a byte at a time', async () => {
    const { socket, closed } = await open(port);
    socket.write('POST /api/v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n');
    const trickle = setInterval(() => socket.writable && socket.write('{'), 200);
    const { ms } = await closed;
    clearInterval(trickle);
    expect(ms).toBeLessThan(6000);
  });

  it('closes a connection whose headers never finish', async () => {
    const { socket, closed } = await open(port);
    socket.write('GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => socket.writable && socket.write('X-A: b\r\n'), 200);
    const { ms } = await closed;
    clearInterval(trickle);
    expect(ms).toBeLessThan(6000);
  });

  it('closes an idle keep-alive connection', async () => {
    const { socket, closed } = await open(port);
    socket.write(request('/api/v1/health'));
    const { text, ms } = await closed;
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(ms).toBeLessThan(6000);
  });

  it('still serves a normal request', async () => {
    expect((await fetch(`${t.url}/api/v1/health`)).status).toBe(200);
  });
});

describe('connection caps', () => {
  let t: TestApp;
  let port: number;
  const held: Socket[] = [];
  beforeAll(async () => {
    t = await startTestApp({ env: { MAX_CONNECTIONS: '6', MAX_CONNECTIONS_PER_ADDRESS: '3' } });
    port = Number(new URL(t.url).port);
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await t.close();
  });

  it('refuses a connection over the per-address cap with 503 and Retry-After, and accepts again once one closes', async () => {
    for (let i = 0; i < 3; i += 1) held.push((await open(port, '127.0.0.2')).socket);
    const extra = await open(port, '127.0.0.2');
    extra.socket.write(request('/api/v1/health'));
    const { text } = await extra.closed;
    expect(text).toMatch(/^HTTP\/1\.1 503/);
    expect(text).toMatch(/retry-after: 5/i);
    expect(text).toContain('service_unavailable');
    // Another address is not affected.
    expect((await fetch(`${t.url}/api/v1/health`)).status).toBe(200);
    held.shift()?.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const again = await open(port, '127.0.0.2');
    again.socket.write(request('/api/v1/health', 'Connection: close\r\n'));
    expect((await again.closed).text).toMatch(/^HTTP\/1\.1 200/);
  });

  it('refuses a connection over the global cap, from any address', async () => {
    for (const address of ['127.0.0.3', '127.0.0.3', '127.0.0.4', '127.0.0.4']) held.push((await open(port, address)).socket);
    const extra = await open(port, '127.0.0.5');
    extra.socket.write(request('/openapi.json'));
    expect((await extra.closed).text).toMatch(/^HTTP\/1\.1 503/);
    // Health still answers in the headroom past the total cap (issue 34: probes never starve).
    const probe = await open(port, '127.0.0.7');
    probe.socket.write(request('/api/v1/health', 'Connection: close\r\n'));
    expect((await probe.closed).text).toMatch(/^HTTP\/1\.1 200/);
  });

  it('closes a connection over the cap that sends nothing', async () => {
    const extra = await open(port, '127.0.0.6');
    const { ms } = await extra.closed;
    expect(ms).toBeLessThan(6000);
  });
});

describe('long-polls (route config holdsRequests: true)', () => {
  it('are exempt from the idle timeout but count against the caps', async () => {
    const config = loadConfig({ IDLE_TIMEOUT_MS: '500', MAX_CONNECTIONS: '2', MAX_CONNECTIONS_PER_ADDRESS: '2' });
    const app = Fastify({ ...serverTimeoutOptions(config.server) });
    const limits = installConnectionLimits(app, config.server, true);
    installPipeline(app, { request: [limits.refuse, limits.lift], response: [] });
    const hold = (ms: number) => new Promise((r) => setTimeout(r, ms));
    app.get('/poll', { config: { holdsRequests: true } }, async () => {
      await hold(1500);
      return { held: true };
    });
    app.get('/slow', async () => {
      await hold(1500);
      return { held: true };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    try {
      // A GET is held when it asks to wait (Prefer: wait), as status reads do.
      const poll = await open(port);
      poll.socket.write(request('/poll', 'Prefer: wait=2\r\nConnection: close\r\n'));
      const slow = await open(port);
      slow.socket.write(request('/slow', 'Connection: close\r\n'));
      const third = await open(port);
      third.socket.write(request('/poll', 'Connection: close\r\n'));
      expect((await poll.closed).text).toContain('"held":true');
      // An ordinary route silent past the idle timeout is cut.
      expect((await slow.closed).text).not.toContain('"held":true');
      expect((await third.closed).text).toMatch(/^HTTP\/1\.1 503/);
    } finally {
      await app.close();
    }
  });
});
