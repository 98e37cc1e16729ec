import { createConnection, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 between the service and its store, to simulate outages:
 * - `forward`   — normal operation
 * - `blackhole` — existing connections are cut and new ones are accepted but never answered
 *                 (a partition: the hardest case, only timeouts notice it)
 * - `refuse`    — existing connections are cut and new ones are reset at once (server down)
 * - `freeze`    — existing connections stay open but nothing passes on them any more, ever (a
 *                 network blip that leaves half-open connections behind); new ones are refused
 *                 until the mode changes, and forwarded normally after
 */
export type ProxyMode = 'forward' | 'blackhole' | 'refuse' | 'freeze';

export interface TcpProxy {
  port: number;
  setMode(mode: ProxyMode): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let mode: ProxyMode = 'forward';
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    track(client);
    if (mode === 'refuse' || mode === 'freeze') {
      client.resetAndDestroy();
      return;
    }
    if (mode === 'blackhole') return;
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    setMode(next) {
      if (next === 'freeze') {
        for (const socket of open) {
          socket.unpipe();
          socket.pause();
        }
      } else if (next !== 'forward') for (const socket of open) socket.destroy();
      mode = next;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
