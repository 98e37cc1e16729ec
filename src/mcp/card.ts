import { LATEST_PROTOCOL_VERSION, type Tool } from '@modelcontextprotocol/sdk/types.js';
import Type, { type Static } from 'typebox';
import type { ServiceDeps } from '../services/context.js';
import { MAX_TOOL_WAIT_SECONDS } from '../services/task-watch.js';
import { SERVICE_NAME } from '../version.js';

/**
 * The server card served at /.well-known/mcp and /mcp/server-card: what a client needs to connect
 * without reading anything else. Field names follow the MCP registry's server.json and the
 * server-card proposal (name, title, version, description, remotes).
 */

export const SERVER_TITLE = 'Human-in-the-loop task service';

export const ServerCardSchema = Type.Object(
  {
    name: Type.String(),
    title: Type.String(),
    version: Type.String({ description: 'The service version.' }),
    description: Type.String(),
    protocolVersion: Type.String({ description: 'Newest MCP protocol version the server speaks; older ones are negotiated.' }),
    remotes: Type.Array(
      Type.Object({
        type: Type.Literal('streamable-http'),
        url: Type.String({ description: 'POST JSON-RPC here. Stateless: no session, initialize is optional.' }),
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

export function serverCard(deps: ServiceDeps, tools: Tool[]): ServerCard {
  const base = deps.config.baseUrl;
  return {
    name: SERVICE_NAME,
    title: SERVER_TITLE,
    version: deps.version,
    description:
      'Tools for AI agents to hand real-world, perception and judgment tasks to a human operator who reviews every task, performs the accepted ones ' +
      'and delivers the results with a signed receipt. Submission is asynchronous: submit, keep the task_id, and wait for the result (see waiting) instead of polling. Free during the pilot.',
    protocolVersion: LATEST_PROTOCOL_VERSION,
    remotes: [{ type: 'streamable-http', url: `${base}/mcp` }],
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
