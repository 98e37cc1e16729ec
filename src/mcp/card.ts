import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import Type, { type Static } from 'typebox';
import type { ServiceDeps } from '../services/context.js';
import { MAX_TOOL_WAIT_SECONDS } from '../services/task-watch.js';
import { SERVICE_NAME } from '../version.js';
import type { McpTypes } from './sdk.js';

/**
 * The server card: what a client needs to connect without reading anything else. Field names
 * follow the MCP server-card extension (SEP-2127: `$schema`, name, title, version, description,
 * remotes with supportedProtocolVersions, authentication). One card, served at every path clients
 * probe: /.well-known/mcp/server-card (the extension's), /.well-known/mcp/server-card.json,
 * /.well-known/mcp.json, /.well-known/mcp and /mcp/server-card.
 */

/** The server-card JSON Schema the card follows (SEP-2127, v1). */
export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';

/** Every path the card is served at. */
export const SERVER_CARD_PATHS = [
  '/.well-known/mcp',
  '/mcp/server-card',
  '/.well-known/mcp/server-card',
  '/.well-known/mcp/server-card.json',
  '/.well-known/mcp.json',
] as const;

export const SERVER_TITLE = 'Human-in-the-loop task service';

export const ServerCardSchema = Type.Object(
  {
    $schema: Type.String({ description: 'The server-card JSON Schema this card follows.' }),
    name: Type.String(),
    title: Type.String(),
    version: Type.String({ description: 'The service version.' }),
    description: Type.String(),
    protocolVersion: Type.String({ description: 'Newest MCP protocol version the server speaks; older ones are negotiated.' }),
    remotes: Type.Array(
      Type.Object({
        type: Type.Literal('streamable-http'),
        url: Type.String({ description: 'POST JSON-RPC here. Stateless: no session, initialize is optional.' }),
        supportedProtocolVersions: Type.Array(Type.String(), { description: 'MCP protocol versions the server negotiates, newest first.' }),
      }),
    ),
    authentication: Type.Object({ required: Type.Boolean(), note: Type.String() }),
    capabilities: Type.Object({
      tools: Type.Object({ listChanged: Type.Boolean() }),
      tasks: Type.Object(
        { requests: Type.Object({ tools: Type.Object({ call: Type.Object({}) }) }), cancel: Type.Object({}) },
        { description: 'MCP tasks (revision 2025-11-25): submit_human_task may be called as a task.' },
      ),
    }),
    waiting: Type.String({ description: 'How an agent waits for a result without a polling loop.' }),
    tools: Type.Array(Type.Object({ name: Type.String(), title: Type.String(), description: Type.String() })),
    documentation: Type.Object({ openapi: Type.String(), llms_txt: Type.String() }),
  },
  { description: 'MCP server card.' },
);
export type ServerCard = Static<typeof ServerCardSchema>;

/** The protocol versions come from the SDK (`mcp`), so the card says what the server negotiates. */
export function serverCard(deps: ServiceDeps, tools: Tool[], mcp: Pick<McpTypes, 'LATEST_PROTOCOL_VERSION' | 'SUPPORTED_PROTOCOL_VERSIONS'>): ServerCard {
  const base = deps.config.baseUrl;
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: SERVICE_NAME,
    title: SERVER_TITLE,
    version: deps.version,
    description:
      'Tools for AI agents to hand real-world, perception and judgment tasks to a human operator who reviews every task, performs the accepted ones ' +
      'and delivers the results with a signed receipt. Submission is asynchronous: submit, keep the task_id, and wait for the result (see waiting) instead of polling. Free during the pilot.',
    protocolVersion: mcp.LATEST_PROTOCOL_VERSION,
    remotes: [{ type: 'streamable-http', url: `${base}/mcp`, supportedProtocolVersions: [...mcp.SUPPORTED_PROTOCOL_VERSIONS] }],
    authentication: { required: false, note: 'No authentication, accounts or tokens; per-client rate limits apply instead.' },
    capabilities: { tools: { listChanged: false }, tasks: { requests: { tools: { call: {} } }, cancel: {} } },
    waiting:
      'A human takes hours, not seconds: do not loop on check_task_status. If your client supports MCP tasks, call submit_human_task as a task ' +
      '(the taskId is the task_id): tasks/get says working until the task is delivered or rejected (completed), at the pollInterval it gives; ' +
      `tasks/result then returns the final task (isError when rejected). Otherwise call check_task_status with wait_seconds (up to ${MAX_TOOL_WAIT_SECONDS}) ` +
      'and known_updated_at: it returns as soon as the task changes. To withdraw a task, message_human_operator naming its task_id (tasks/cancel cannot).',
    tools: tools.map((tool) => ({ name: tool.name, title: tool.title ?? tool.name, description: tool.description ?? '' })),
    documentation: { openapi: `${base}/openapi.json`, llms_txt: `${base}/llms.txt` },
  };
}
