import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * The MCP tools as the tool definitions of the OpenAI and Anthropic tool-use APIs, generated from
 * the same definitions tools/list returns (tools.ts): an agent built on either API can paste them
 * into its `tools` and forward each call to /mcp (or the REST twin) unchanged.
 */

/** OpenAI Chat Completions / Responses: `{type: "function", function: {name, description, parameters}}`. */
export function openAiTools(tools: readonly Tool[]) {
  return tools.map((tool) => ({
    type: 'function' as const,
    function: { name: tool.name, description: tool.description ?? tool.title ?? tool.name, parameters: plain(tool.inputSchema) },
  }));
}

/** Anthropic Messages: `{name, description, input_schema}`. */
export function anthropicTools(tools: readonly Tool[]) {
  return tools.map((tool) => ({ name: tool.name, description: tool.description ?? tool.title ?? tool.name, input_schema: plain(tool.inputSchema) }));
}

function plain(schema: Tool['inputSchema']): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}
