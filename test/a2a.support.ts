import { SendMessageRequest, Task } from '@a2a-js/sdk';
import { type Client, ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { expect } from 'vitest';
import { postJson, TEST_ADMIN_KEY, type TestApp } from './support/app.js';

/** The two A2A bindings the service declares, as the SDK names them. */
export const BINDINGS = ['JSONRPC', 'HTTP+JSON'] as const;
export type Binding = (typeof BINDINGS)[number];

/**
 * The SDK's own client, built from the served agent card, speaking `binding`. The card names the
 * service's BASE_URL; requests to it go to the test server (a fetch that swaps the origin), as
 * behind a reverse proxy. `headers`: extra headers on every request (a signature, a version).
 */
export async function a2aClient(t: TestApp, binding: Binding, headers?: () => Promise<Record<string, string>> | Record<string, string>): Promise<Client> {
  const fetchImpl: typeof fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input).replace(t.config.baseUrl, t.url);
    const extra = headers ? await headers() : {};
    return fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string> | undefined), ...extra } });
  };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [binding],
  });
  return factory.createFromUrl(t.url);
}

/** A SendMessageRequest from its JSON form (parts `{text}` / `{data}`), as the SDK's types want it. */
export function sendRequest(json: {
  text?: string | string[];
  data?: Record<string, unknown>;
  messageId?: string;
  taskId?: string;
  contextId?: string;
  returnImmediately?: boolean;
  historyLength?: number;
}) {
  const texts = json.text === undefined ? [] : Array.isArray(json.text) ? json.text : [json.text];
  const parts: Record<string, unknown>[] = texts.map((text) => ({ text }));
  if (json.data) parts.push({ data: json.data, mediaType: 'application/json' });
  return SendMessageRequest.fromJSON({
    message: {
      messageId: json.messageId ?? `m-${Math.random().toString(36).slice(2)}`,
      role: 'ROLE_USER',
      parts,
      ...(json.taskId ? { taskId: json.taskId } : {}),
      ...(json.contextId ? { contextId: json.contextId } : {}),
    },
    configuration: {
      returnImmediately: json.returnImmediately ?? true,
      ...(json.historyLength === undefined ? {} : { historyLength: json.historyLength }),
    },
  });
}

/** A task description no other test sends (duplicate detection compares descriptions). */
export function uniqueDescription(): string {
  return `Check whether the bakery at 12 Main Street opens on Sunday mornings (${Math.random().toString(36).slice(2)}).`;
}

/** The Task of a SendMessage result, as JSON (ProtoJSON, as on the wire). */
export function taskOf(result: unknown): Record<string, unknown> {
  const task = result as Parameters<typeof Task.toJSON>[0];
  expect(task).toHaveProperty('status');
  return Task.toJSON(task) as Record<string, unknown>;
}

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

/** The operator, through the real admin API. */
export const operator = {
  async patch(t: TestApp, taskId: string, body: Record<string, unknown>): Promise<void> {
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${taskId}`, {
      method: 'PATCH',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  },
  async ask(t: TestApp, taskId: string, question: string): Promise<string> {
    const res = await postJson(`${t.url}/api/v1/admin/tasks/${taskId}/questions`, { question }, admin);
    expect(res.status).toBe(201);
    return ((await res.json()) as { question_id: string }).question_id;
  },
};
