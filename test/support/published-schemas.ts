/**
 * JSON Schemas of formats whose publishers document them but ship no schema package, written here
 * from that documentation so tests can hold the service to them:
 * - the MCP server card (SEP-2127 "MCP Server Cards", its field descriptions: $schema, reverse-DNS
 *   name with exactly one slash, version without ranges, remotes with supportedProtocolVersions and
 *   authentication {required, schemes}, capabilities, tools as MCP Tool objects);
 * - OpenAI function tools (Chat Completions `tools`: type "function", function {name matching
 *   ^[a-zA-Z0-9_-]{1,64}$, description, parameters as a JSON Schema object});
 * - Anthropic tools (Messages `tools`: name matching ^[a-zA-Z0-9_-]{1,64}$, description,
 *   input_schema a JSON Schema with type "object").
 */

const toolName = { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' };
const objectSchema = { type: 'object', required: ['type'], properties: { type: { const: 'object' } } };

export const SERVER_CARD_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['$schema', 'name', 'version', 'capabilities'],
  properties: {
    $schema: { type: 'string', format: 'uri' },
    name: { type: 'string', pattern: '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$', minLength: 3, maxLength: 200 },
    version: { type: 'string', minLength: 1, maxLength: 255, not: { pattern: '^[\\^~><=]|\\.x$|\\*' } },
    description: { type: 'string', minLength: 1, maxLength: 100 },
    title: { type: 'string', minLength: 1, maxLength: 100 },
    websiteUrl: { type: 'string', format: 'uri' },
    remotes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'url'],
        properties: {
          type: { enum: ['streamable-http', 'sse'] },
          url: { type: 'string', format: 'uri' },
          supportedProtocolVersions: { type: 'array', items: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } },
          authentication: {
            type: 'object',
            required: ['required', 'schemes'],
            properties: { required: { type: 'boolean' }, schemes: { type: 'array', items: { type: 'string' } } },
          },
        },
      },
    },
    capabilities: {
      type: 'object',
      properties: {
        experimental: { type: 'object' },
        logging: { type: 'object' },
        completions: { type: 'object' },
        prompts: { type: 'object', properties: { listChanged: { type: 'boolean' } } },
        resources: { type: 'object', properties: { subscribe: { type: 'boolean' }, listChanged: { type: 'boolean' } } },
        tools: { type: 'object', properties: { listChanged: { type: 'boolean' } } },
        tasks: { type: 'object' },
        extensions: { type: 'object', additionalProperties: { type: 'object' } },
      },
    },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'inputSchema'],
        properties: {
          name: { type: 'string' },
          title: { type: 'string' },
          description: { type: 'string' },
          inputSchema: objectSchema,
          outputSchema: { type: 'object' },
          annotations: { type: 'object' },
          execution: { type: 'object', properties: { taskSupport: { enum: ['forbidden', 'optional', 'required'] } } },
        },
      },
    },
    _meta: { type: 'object' },
  },
} as const;

export const OPENAI_TOOLS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    required: ['type', 'function'],
    additionalProperties: false,
    properties: {
      type: { const: 'function' },
      function: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: { name: toolName, description: { type: 'string' }, parameters: objectSchema, strict: { type: 'boolean' } },
      },
    },
  },
} as const;

export const ANTHROPIC_TOOLS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    required: ['name', 'input_schema'],
    additionalProperties: false,
    properties: { name: toolName, description: { type: 'string' }, input_schema: objectSchema, cache_control: { type: 'object' } },
  },
} as const;
