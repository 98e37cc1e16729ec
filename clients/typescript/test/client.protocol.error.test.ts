import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HumanTaskClient, HumanTaskError, ServiceUnavailableError } from '../src/index.js';

/** Answers the real app never gives but a proxy or a newer service might: the client stays typed. */

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

async function answering(status: number, body: string, headers: Record<string, string> = {}): Promise<{ url: string; count: () => number }> {
  let requests = 0;
  const listening = createServer((_req, res) => {
    requests += 1;
    res.writeHead(status, headers);
    res.end(body);
  });
  server = listening;
  await new Promise<void>((r) => listening.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`, count: () => requests };
}

const ID = 'task-2030-0123456789abcdef0123456789abcdef';

describe('unusual answers', () => {
  it('a code this client does not know is a HumanTaskError carrying it', async () => {
    const { url } = await answering(418, JSON.stringify({ error: 'brand_new_code', message: 'Something new.' }), { 'content-type': 'application/json' });
    const error = await new HumanTaskClient({ baseUrl: url }).getTask(ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HumanTaskError);
    expect(error).toMatchObject({ code: 'brand_new_code', status: 418, message: 'Something new.' });
  });

  it('a 502 page from a proxy is retried, then an unexpected_response', async () => {
    const { url, count } = await answering(502, '<html>Bad gateway</html>', { 'content-type': 'text/html' });
    const error = await new HumanTaskClient({ baseUrl: url, maxRetries: 2 }).getTask(ID).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unexpected_response', status: 502 });
    expect(count()).toBe(3);
  });

  it('a 503 with a short Retry-After is retried; its typed error arrives after the retries', async () => {
    const { url, count } = await answering(503, JSON.stringify({ error: 'service_unavailable', message: 'Store down.' }), {
      'content-type': 'application/json',
      'retry-after': '1',
    });
    const started = Date.now();
    const error = await new HumanTaskClient({ baseUrl: url, maxRetries: 1 }).getTask(ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as ServiceUnavailableError).retryAfterSeconds).toBe(1);
    expect(count()).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('a message is not re-sent after a failure that may have reached the service', async () => {
    const { url, count } = await answering(502, 'Bad gateway');
    const error = await new HumanTaskClient({ baseUrl: url })
      .sendMessage({ message: 'Hello there, operator.', reply_to: 'agent@mail.example-agent.dev' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unexpected_response', status: 502 });
    expect(count()).toBe(1);
  });
});
