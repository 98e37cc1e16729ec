import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { expect } from 'vitest';
import { postJson, TEST_ADMIN_KEY, type TestApp, useSuiteResource, validTask } from './support/app.js';
import { waitUntil } from './support/smtp.js';

/** A real webhook receiver on loopback (node:http) whose behaviour is chosen by the request path. */

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  /** http://127.0.0.1:<port> */
  url: string;
  received: Received[];
  /** Requests to a path (order of arrival). */
  to(path: string): Received[];
  /** Sockets currently open (a hanging receiver keeps one). */
  openSockets(): number;
  close(): Promise<void>;
}

/**
 * Paths:
 * - `/ok…` 204; `/fail-N…` 500 for the first N requests to that exact path, then 200;
 * - `/gone…` 410; `/redirect…` 302 to `/ok-redirected`; `/hang…` never answers;
 * - `/huge…` 200 then an endless body; `/slow-<ms>…` 200 after <ms>; `/reset…` drops the connection.
 */
export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const seen = (counts.get(path) ?? 0) + 1;
      counts.set(path, seen);
      const fail = /^\/fail-(\d+)/.exec(path);
      const slow = /^\/slow-(\d+)/.exec(path);
      if (path.startsWith('/ok')) res.writeHead(204).end();
      else if (fail) res.writeHead(seen <= Number(fail[1]) ? 500 : 200).end('{"ok":true}');
      else if (path.startsWith('/gone')) res.writeHead(410).end();
      else if (path.startsWith('/redirect')) res.writeHead(302, { location: '/ok-redirected' }).end();
      else if (path.startsWith('/hang')) return;
      else if (path.startsWith('/reset')) req.socket.resetAndDestroy();
      else if (path.startsWith('/huge')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const block = Buffer.alloc(64 * 1024, 120);
        const pump = () => {
          while (!res.destroyed && res.write(block));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      } else if (slow) setTimeout(() => res.writeHead(200).end(), Number(slow[1]));
      else res.writeHead(404).end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    to: (path) => received.filter((r) => r.path === path),
    openSockets: () => sockets.size,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A receiver for the whole suite (started in beforeAll, closed in afterAll). */
export function useReceiver(): Receiver {
  return useSuiteResource(startReceiver, (receiver) => receiver.close());
}

/** Environment for an app that sends webhooks to a loopback receiver quickly. */
export const WEBHOOK_TEST_ENV: Record<string, string> = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  MAIL_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '3000',
};

export const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

export async function submitWithCallback(t: TestApp, callbackUrl: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ callback_url: callbackUrl, ...overrides }));
  expect(res.status).toBe(202);
  return ((await res.json()) as { task_id: string }).task_id;
}

export async function patchTask(t: TestApp, taskId: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${t.url}/api/v1/admin/tasks/${taskId}`, {
    method: 'PATCH',
    headers: { ...admin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

export const ACCEPT = { status: 'accepted', eta: '2031-01-01T12:00:00Z' };

export interface WebhookView {
  id: string;
  task_id: string;
  event: string;
  target: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  attempt_log: { attempt: number; at: string; status_code: number | null; error: string | null; duration_ms: number }[];
}

export async function listWebhooks(t: TestApp, taskId: string): Promise<WebhookView[]> {
  const res = await fetch(`${t.url}/api/v1/admin/webhooks?task_id=${taskId}`, { headers: admin });
  expect(res.status).toBe(200);
  return ((await res.json()) as { webhooks: WebhookView[] }).webhooks;
}

/** Waits until the task's event `event` satisfies `check`, and returns it. */
export function waitForEvent(t: TestApp, taskId: string, event: string, check: (w: WebhookView) => boolean, timeoutMs = 15_000): Promise<WebhookView> {
  return waitUntil(
    async () => {
      const found = (await listWebhooks(t, taskId)).find((w) => w.event === event);
      return found && check(found) ? found : undefined;
    },
    timeoutMs,
    `webhook ${event} of ${taskId}`,
  );
}

/** Runs `npm run verify-webhook` (tsx, as npm does), optionally with a body on stdin. */
export function runVerifyWebhook(
  args: string[],
  stdin?: string,
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  // Vite puts its own BASE_URL ('/') into the test process's environment; the CLI must not see it.
  const { BASE_URL: _vite, ...inherited } = process.env;
  const env = { ...inherited, ...extraEnv };
  return new Promise((resolve) => {
    const child = execFile(path.resolve('node_modules/.bin/tsx'), ['src/cli/verify-webhook.ts', ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
    child.stdin?.end(stdin ?? '');
  });
}
