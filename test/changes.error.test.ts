import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { type Change, createChangeFeed } from '../src/store/change-feed.js';
import { STORES, useTestApp } from './support/app.js';

/** A TCP proxy to PostgreSQL that a test can cut and restore (an outage without touching the server). */
class Proxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(5432, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server?.listen(port, '127.0.0.1', resolve));
    this.port = (this.server?.address() as net.AddressInfo).port;
  }

  /** Refuses new connections and resets the open ones. */
  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.resetAndDestroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}

describe.runIf(STORES.includes('postgres'))('change feed through an outage (PostgreSQL)', () => {
  const t = useTestApp({ store: 'postgres' });

  it('survives losing its LISTEN connection, reports it, and reconnects when the server is back', async () => {
    const proxy = new Proxy();
    await proxy.start();
    const url = new URL(t.config.databaseUrl);
    url.port = String(proxy.port);
    url.hostname = '127.0.0.1';
    const feed = createChangeFeed({ store: t.store, databaseUrl: url.toString(), log: createLogger('silent') });
    const seen: Change[] = [];
    let reconnects = 0;
    feed.onReconnect(() => (reconnects += 1));
    feed.subscribe((change) => seen.push(change));
    try {
      await expect.poll(() => feed.connected).toBe(true);
      expect(reconnects).toBe(1);
      // Published through the store's own pool (not the proxy): heard through the LISTEN connection.
      await feed.publish({ kind: 'task', taskId: 'task-2030-00000000000000000000000000000001' });
      await expect.poll(() => seen.length).toBe(1);

      await proxy.cut();
      await expect.poll(() => feed.connected).toBe(false);
      // Down for a while: reconnection attempts fail quietly (no crash, no unhandled error).
      await new Promise((r) => setTimeout(r, 700));
      await feed.publish({ kind: 'task', taskId: 'task-2030-00000000000000000000000000000002' });

      await proxy.start(proxy.port);
      await expect.poll(() => feed.connected, { timeout: 10_000 }).toBe(true);
      expect(reconnects).toBe(2);
      await feed.publish({ kind: 'task', taskId: 'task-2030-00000000000000000000000000000003' });
      await expect.poll(() => seen.map((c) => (c.kind === 'task' ? c.taskId.slice(-1) : '')).join('')).toBe('13');
    } finally {
      await feed.close();
      await proxy.cut();
    }
  });

  it('keeps trying while the server cannot be reached at all, and stops on close', async () => {
    const feed = createChangeFeed({ store: t.store, databaseUrl: 'postgres://postgres@127.0.0.1:9/nowhere', log: createLogger('silent') });
    let reconnects = 0;
    feed.onReconnect(() => (reconnects += 1));
    feed.subscribe(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    expect(feed.connected).toBe(false);
    expect(reconnects).toBe(0);
    await feed.close();
    expect(feed.connected).toBe(false);
  });
});
