import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type TestApp, useSuiteResource } from './support/app.js';

/** Helpers shared by the MCP suites: the SDK's own client over a real socket, and raw JSON-RPC. */

export type Json = Record<string, unknown>;

export const MCP_ACCEPT = 'application/json, text/event-stream';

/** The tools the MCP server lists, in order (pinned here, apart from the server's own list). */
export const TOOL_NAMES = [
  'get_human_services',
  'submit_human_task',
  'check_task_status',
  'message_human_operator',
  'answer_operator_question',
  'check_message_thread',
  'list_my_tasks',
];

/** An SDK client that has done the initialize handshake against the test app. */
/** One MCP client for a suite, connected to `t` in beforeAll and closed in afterAll. */
export function useMcpClient(t: TestApp): Client {
  return useSuiteResource(
    () => connectClient(t),
    (client) => client.close(),
  );
}

export async function connectClient(t: TestApp): Promise<Client> {
  const client = new Client({ name: 'mcp-test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
  return client;
}

/** Calls a tool and returns the result with its structured content typed loosely for assertions. */
export async function call(client: Client, name: string, args: Json = {}): Promise<CallToolResult & { structuredContent: Json }> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: Json };
}

/** The text of each content block. */
export function texts(result: CallToolResult): string[] {
  return result.content.map((block) => (block.type === 'text' ? block.text : ''));
}

/** POST /mcp with a raw JSON-RPC body, as a client that never sent initialize. */
export async function rpc(t: TestApp, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

let nextId = 1;
export function toolsCall(name: string, args: Json = {}): Json {
  return { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request through node:http, which (unlike fetch) lets a test set the Host header — what a page
 * on a rebinding domain would send.
 */
export function rawPost(t: TestApp, path: string, body: unknown, headers: Record<string, string>): Promise<RawResponse> {
  const url = new URL(t.url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
