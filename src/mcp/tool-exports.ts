import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { API_VERSION } from '../version.js';
import type { ToolName } from './tools.js';

/**
 * The MCP tools as the tool definitions of the OpenAI and Anthropic tool-use APIs, generated from
 * the same definitions tools/list returns (tools.ts): an agent built on either API can paste them
 * into its `tools` and forward each call to /mcp (or the REST twin) unchanged.
 *
 * Each description ends by saying where the call goes (the MCP URL, and the REST route over the
 * same service function): an agent holding only the file knows where to send it. Both formats
 * refuse keys of their own, so the description is the one place that travels with the tool.
 */

/**
 * The REST route each tool maps to (the same service function behind both doors). Keyed by every
 * tool name, so a new tool without its route does not compile.
 */
export const REST_TWINS: Readonly<Record<ToolName, string>> = {
  get_human_services: `GET /api/${API_VERSION}/services`,
  submit_human_task: `POST /api/${API_VERSION}/tasks`,
  check_task_status: `GET /api/${API_VERSION}/tasks/{task_id}`,
  message_human_operator: `POST /api/${API_VERSION}/messages`,
  answer_operator_question: `POST /api/${API_VERSION}/tasks/{task_id}/questions/{question_id}/answer`,
  check_message_thread: `GET /api/${API_VERSION}/messages/{message_id}`,
  list_my_tasks: `GET /api/${API_VERSION}/tasks`,
};

function described(tool: Tool, base: string): string {
  const [method, path] = ((REST_TWINS as Readonly<Record<string, string>>)[tool.name] ?? '').split(' ');
  const rest = method && path ? `; or REST, ${method} ${base}${path}` : '';
  return `${tool.description ?? tool.title ?? tool.name} Where to send a call: MCP, POST ${base}/mcp (JSON-RPC tools/call, name "${tool.name}", these arguments)${rest}.`;
}

/** OpenAI Chat Completions / Responses: `{type: "function", function: {name, description, parameters}}`. */
export function openAiTools(tools: readonly Tool[], base: string) {
  return tools.map((tool) => ({
    type: 'function' as const,
    function: { name: tool.name, description: described(tool, base), parameters: plain(tool.inputSchema) },
  }));
}

/** Anthropic Messages: `{name, description, input_schema}`. */
export function anthropicTools(tools: readonly Tool[], base: string) {
  return tools.map((tool) => ({ name: tool.name, description: described(tool, base), input_schema: plain(tool.inputSchema) }));
}

function plain(schema: Tool['inputSchema']): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}
