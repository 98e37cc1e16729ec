import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { JsonRpcResponse, RawClientDispatch } from '@modelcontextprotocol/ext-tasks/client';
import { createTaskSessionFromClient, type TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import { MCP_ACCEPT } from './mcp.support.js';
import type { TestApp } from './support/app.js';

/** Helpers for protocol revision 2026-07-28: the official v2 client, ext-tasks' client, and raw requests. */

export const MODERN = '2026-07-28';
export const TASKS_EXT = 'io.modelcontextprotocol/tasks';

export type Json = Record<string, unknown>;

/** The official v2 client, negotiating the revision with server/discover. */
export async function connectModern(t: TestApp, name = 'modern-agent'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
  return client;
}

let nextId = 1;

/** The _meta envelope of a 2026-07-28 request; `tasks` declares the tasks extension. */
export function envelope(tasks: boolean, version = MODERN): Json {
  return {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-agent', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS_EXT]: {} } } : {},
  };
}

/** The standard headers of a 2026-07-28 request: MCP-Protocol-Version, Mcp-Method and, for a named target, Mcp-Name. */
function modernHeaders(method: string, params: Json): Record<string, string> {
  const name = typeof params.taskId === 'string' ? params.taskId : typeof params.name === 'string' ? params.name : undefined;
  return {
    'content-type': 'application/json',
    accept: MCP_ACCEPT,
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name ? { 'mcp-name': name } : {}),
  };
}

/** POST /mcp a 2026-07-28 request with its standard headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name). */
export async function modernRpc(
  t: TestApp,
  method: string,
  params: Json,
  options: { tasks?: boolean; headers?: Record<string, string>; meta?: Json } = {},
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { ...modernHeaders(method, params), ...options.headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: options.meta ?? envelope(options.tasks ?? true) } }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

/** ext-tasks' raw dispatch: the framed request over HTTP with the headers 2026-07-28 requires. */
export function rawDispatch(t: TestApp): RawClientDispatch {
  return async (request, options) => {
    const message = request as { method: string; params?: Json; id?: unknown };
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: modernHeaders(message.method, message.params ?? {}),
      body: JSON.stringify({ jsonrpc: '2.0', id: message.id ?? `ext-${nextId++}`, ...message }),
      ...(options?.signal ? { signal: options.signal } : {}),
    });
    const body = (await res.json()) as { result?: JsonRpcResponse extends { result: infer R } ? R : never; error?: { code: number; message: string } };
    if (body.error) return { kind: 'error', error: body.error };
    return { kind: 'result', result: body.result ?? null } as JsonRpcResponse;
  };
}

/** A task-enabled session of ext-tasks' own client over a connected v2 client. */
export function taskSession(t: TestApp, client: Client): TaskEnabledSession {
  return createTaskSessionFromClient(client, {
    endpointId: `test-${t.url}`,
    rawDispatch: rawDispatch(t),
    v2RequestFraming: { protocolVersion: MODERN, clientInfo: { name: 'ext-tasks-agent', version: '1.0.0' }, clientCapabilities: {} },
  });
}
