import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import Type, { type Static } from 'typebox';
import { AWAITING_ANSWER_GUIDE } from '../domain/questions/questions.js';
import type { ServiceDeps } from '../services/context.js';
import { MAX_TOOL_WAIT_SECONDS } from '../services/waiting/task-watch.js';
import { SERVICE_NAME } from '../version.js';
import { MCP_REVISIONS } from './revisions.js';
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

const Open = { additionalProperties: true } as const;

export const ServerCardSchema = Type.Object(
  {
    $schema: Type.String({ description: 'The server-card JSON Schema this card follows.' }),
    name: Type.String({ description: 'Reverse-DNS name of this deployment (BASE_URL host reversed) and the service, one slash between.' }),
    title: Type.String(),
    version: Type.String({ description: 'The service version.' }),
    description: Type.String({ maxLength: 100 }),
    protocolVersion: Type.String({ description: 'Newest MCP protocol revision the server speaks; older ones are negotiated.' }),
    remotes: Type.Array(
      Type.Object({
        type: Type.Literal('streamable-http'),
        url: Type.String({ description: 'POST JSON-RPC here. Stateless: no session, initialize is optional.' }),
        supportedProtocolVersions: Type.Array(Type.String(), {
          description: 'MCP protocol revisions served, newest first: 2026-07-28 (per-request, server/discover) and those negotiated with initialize.',
        }),
        authentication: Type.Object({ required: Type.Boolean(), schemes: Type.Array(Type.String()) }),
      }),
    ),
    authentication: Type.Object({ required: Type.Boolean(), note: Type.String() }),
    capabilities: Type.Object({
      tools: Type.Object({ listChanged: Type.Boolean() }),
      tasks: Type.Object(
        { requests: Type.Object({ tools: Type.Object({ call: Type.Object({}) }) }), cancel: Type.Object({}) },
        { description: 'MCP tasks (revision 2025-11-25): submit_human_task may be called as a task.' },
      ),
      extensions: Type.Object(
        { 'io.modelcontextprotocol/tasks': Type.Object({}) },
        { description: 'Revision 2026-07-28: the tasks extension (SEP-2663), declared per request by the client.' },
      ),
    }),
    waiting: Type.String({ description: 'How an agent waits for a result without a polling loop.' }),
    tools: Type.Array(Type.Object({ name: Type.String(), title: Type.String(), description: Type.String(), inputSchema: Type.Object({}, Open) }, Open), {
      description: 'The tools exactly as tools/list returns them.',
    }),
    documentation: Type.Object({ openapi: Type.String(), llms_txt: Type.String() }),
  },
  { description: 'MCP server card.' },
);
export type ServerCard = Static<typeof ServerCardSchema>;

/** The card's name: the deployment's host reversed (reverse-DNS, as the server-card schema asks), then the service. */
export function serverCardName(baseUrl: string): string {
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '').replace(/[^a-zA-Z0-9.-]/g, '-');
  return `${host.split('.').reverse().join('.')}/${SERVICE_NAME}`;
}

/** The protocol versions come from the SDK (`mcp`) and MCP_REVISIONS, so the card says what the server serves. */
export function serverCard(deps: ServiceDeps, tools: Tool[], mcp: Pick<McpTypes, 'LATEST_PROTOCOL_VERSION' | 'SUPPORTED_PROTOCOL_VERSIONS'>): ServerCard {
  const base = deps.config.baseUrl;
  const versions = [...new Set<string>([...MCP_REVISIONS, ...mcp.SUPPORTED_PROTOCOL_VERSIONS])];
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: serverCardName(base),
    title: SERVER_TITLE,
    version: deps.version,
    description: 'Hand real-world, perception and judgment tasks to a human operator; signed results.',
    protocolVersion: MCP_REVISIONS[0],
    remotes: [{ type: 'streamable-http', url: `${base}/mcp`, supportedProtocolVersions: versions, authentication: { required: false, schemes: [] } }],
    authentication: { required: false, note: 'No authentication, accounts or tokens; per-client rate limits apply instead.' },
    capabilities: {
      tools: { listChanged: false },
      tasks: { requests: { tools: { call: {} } }, cancel: {} },
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    },
    waiting:
      'A human takes hours, not seconds: do not loop on check_task_status. Submission is asynchronous: submit, keep the task_id, and wait for the result. ' +
      'If your client supports MCP tasks, call submit_human_task as a task (the taskId is the task_id): on 2025-11-25, tasks/get says working until the task is ' +
      'delivered or rejected (completed), input_required while a question of the operator awaits your answer (answer with answer_operator_question), then tasks/result returns the final task (isError when rejected); on 2026-07-28 (tasks extension), tasks/get says working, ' +
      'input_required when the operator asks (answer with tasks/update), completed with the result or failed with the reason. tasks/get holds briefly for a change; ' +
      `look again at its pollInterval. Otherwise call check_task_status with wait_seconds (up to ${MAX_TOOL_WAIT_SECONDS}) and known_updated_at: it returns as soon as the task changes. ` +
      'To withdraw a task, tasks/cancel (both revisions): a task nobody accepted yet is withdrawn at once, an accepted one gets the operator a withdrawal request and the operator decides. ' +
      AWAITING_ANSWER_GUIDE,
    tools: tools.map((tool) => JSON.parse(JSON.stringify(tool)) as ServerCard['tools'][number]),
    documentation: { openapi: `${base}/openapi.json`, llms_txt: `${base}/llms.txt` },
  };
}
