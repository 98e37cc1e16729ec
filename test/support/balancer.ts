import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  url: string;
  /** How many requests each upstream got, by index. */
  served: number[];
  close(): Promise<void>;
}

/**
 * A small loopback reverse proxy standing in for Caddy: round-robin over the upstreams, and, like
 * Caddy, it replaces whatever X-Forwarded-For a client sent with the client's socket address (so
 * the service runs with TRUST_PROXY=1). Each response says which upstream served it (X-Upstream).
 */
export async function startBalancer(upstreams: string[]): Promise<Balancer> {
  const served = upstreams.map(() => 0);
  let next = 0;
  const server = http.createServer((request, response) => {
    const index = next++ % upstreams.length;
    served[index] = (served[index] ?? 0) + 1;
    const target = new URL(request.url ?? '/', upstreams[index]);
    const headers = { ...request.headers, 'x-forwarded-for': request.socket.remoteAddress ?? '', 'x-forwarded-proto': 'http' };
    const upstream = http.request(target, { method: request.method, headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'x-upstream': String(index) });
      answer.pipe(response);
    });
    // An upstream that answers before reading the whole body (a 429, a 413) may close its side while
    // the body is still being written: that is not a failure once its answer is on its way.
    upstream.on('error', () => {
      if (response.headersSent) return;
      response.writeHead(502);
      response.end();
    });
    request.on('error', () => upstream.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
