import { type Agent, request as httpRequest } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';

/** A port on 127.0.0.1 that was free a moment ago, for a server started in another process. */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Retries `url` until something answers (any status), or throws after `timeoutMs`. */
export async function waitForServer(url: string, timeoutMs = 30_000): Promise<Response> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fetch(url);
    } catch {
      if (Date.now() > until) throw new Error(`${url} did not come up`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A raw connection to a test server, for requests no HTTP client would send. */
export interface RawExchange {
  socket: Socket;
  /** Resolves with everything received and the milliseconds until the server closed. */
  closed: Promise<{ text: string; ms: number }>;
}

/** Opens a raw TCP connection to 127.0.0.1:`port` from `localAddress` (any 127.x address). */
export function openRaw(port: number, localAddress = '127.0.0.1'): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let text = '';
    const closed = new Promise<{ text: string; ms: number }>((done) => {
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => done({ text, ms: Date.now() - started }));
    });
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

/**
 * One request through Node's own HTTP client, for tests that send thousands: `fetch` (undici) costs
 * about five times the CPU of `http.request` per round trip on Node 20 (0.9 against 0.2 ms against a
 * bare server here), and those tests are bound by the CPU. The path is sent exactly as given, with
 * no normalisation, redirects are not followed, and the body is read whole as UTF-8.
 */
export function requestText(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string; agent: Agent },
): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  // The path as written: everything from the first slash after the authority.
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  const path = slash < 0 ? '/' : url.slice(slash);
  const headers = { ...init.headers };
  if (init.body !== undefined || init.method !== 'GET') headers['content-length'] = String(Buffer.byteLength(init.body ?? ''));
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: init.method, headers, agent: init.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}
