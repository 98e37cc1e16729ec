import net from 'node:net';
import { fileURLToPath } from 'node:url';

/** A loopback TCP balancer: each new connection goes to the next backend port in turn. */
export async function startBalancer(ports: number[]): Promise<{ port: number; close: () => Promise<void> }> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const port = ports[next++ % ports.length] ?? 0;
    const upstream = net.connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Run as its own process (`node --import tsx bench/balancer.ts <port>…`): prints the balancer's
 * port on stdout, then serves until killed. The benchmarks run it apart from the load generator,
 * so that the two do not share one event loop, as a real balancer would not.
 */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { port } = await startBalancer(process.argv.slice(2).map(Number));
  process.stdout.write(`${port}\n`);
}
