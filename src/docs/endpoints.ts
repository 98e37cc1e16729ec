import { TOOL_NAMES, type ToolName } from '../mcp/tools.js';
import { API_VERSION } from '../version.js';

/**
 * The addresses every document, page and summary names. One list, so two documents can never
 * point an agent at different places.
 */

export interface DocumentInfo {
  /** Short id, also the human page: /docs/<id>. */
  id: string;
  path: string;
  /** Other paths serving the same body. */
  aliases: string[];
  title: string;
  description: string;
  mediaType: string;
  /** Served by another part of the service (receipts, MCP); this one only links to it. */
  external?: boolean;
}

export const DOCUMENTS: readonly DocumentInfo[] = [
  {
    id: 'agent',
    path: '/agent.json',
    aliases: ['/.well-known/agent.json'],
    title: 'Platform manifest (agent card)',
    description:
      'Everything an agent needs in one file: services, task schema, accepted and rejected task types, pricing, trust policy, limits and endpoints. Also readable as an A2A-style agent card.',
    mediaType: 'application/json',
  },
  {
    id: 'agent-card',
    path: '/.well-known/agent-card.json',
    aliases: [],
    title: 'A2A agent card',
    description:
      'The A2A v1 agent card (name, interfaces, capabilities, skills), signed with the receipt key as a detached JWS over its RFC 8785 canonical form.',
    mediaType: 'application/json',
  },
  {
    id: 'human',
    path: '/.well-known/human.json',
    aliases: [],
    title: 'The human operator',
    description: "Who does the work: the operator's role, languages, service area, working hours, policy, and live availability figures.",
    mediaType: 'application/json',
  },
  {
    id: 'capabilities',
    path: '/.well-known/capabilities.json',
    aliases: [],
    title: 'Capabilities',
    description: 'What the service can do, structured by task type, with the interfaces, limits and live queue figures.',
    mediaType: 'application/json',
  },
  {
    id: 'services',
    path: '/.well-known/services.json',
    aliases: [],
    title: 'Services catalog',
    description: 'The whole catalog in one document (GET /api/v1/services pages through the same list).',
    mediaType: 'application/json',
  },
  {
    id: 'openapi',
    path: '/openapi.json',
    aliases: [],
    title: 'OpenAPI 3.0 description',
    description: 'Every endpoint, parameter, status code and header, generated from the route schemas.',
    mediaType: 'application/json',
  },
  {
    id: 'jwks',
    path: '/.well-known/jwks.json',
    aliases: [],
    title: 'Receipt signing keys (JWKS)',
    description: 'The Ed25519 public keys that verify delivery receipts; retired keys stay published.',
    mediaType: 'application/json',
    external: true,
  },
  {
    id: 'oauth-protected-resource',
    path: '/.well-known/oauth-protected-resource',
    aliases: [],
    title: 'OAuth protected-resource metadata (RFC 9728)',
    description: 'States that nothing here is token-protected: no authorization server, no scopes.',
    mediaType: 'application/json',
  },
  {
    id: 'mcp',
    path: '/.well-known/mcp',
    aliases: ['/mcp/server-card', '/.well-known/mcp/server-card', '/.well-known/mcp.json'],
    title: 'MCP server card',
    description: 'Handshake of the streamable-HTTP tool server at /mcp: its tools and how to connect.',
    mediaType: 'application/json',
    external: true,
  },
  {
    id: 'llms',
    path: '/llms.txt',
    aliases: [],
    title: 'llms.txt',
    description: 'A short plain-text guide for language models, with links to everything else.',
    mediaType: 'text/plain',
  },
  {
    id: 'llms-full',
    path: '/llms-full.txt',
    aliases: [],
    title: 'llms-full.txt',
    description: 'llms.txt, the overview and the whole API reference in one plain-text file.',
    mediaType: 'text/plain',
  },
  {
    id: 'index',
    path: '/index.md',
    aliases: [],
    title: 'Overview (markdown)',
    description: 'What the service is, its policy and how to use it, in markdown.',
    mediaType: 'text/markdown',
  },
  {
    id: 'api',
    path: '/api.md',
    aliases: [],
    title: 'API reference (markdown)',
    description: 'Every endpoint, field, limit, error and header in one markdown page.',
    mediaType: 'text/markdown',
  },
];

export function documentById(id: string): DocumentInfo | undefined {
  return DOCUMENTS.find((d) => d.id === id);
}

/** One-line summaries of the MCP tools for the documents; full descriptions are on the server card. */
const MCP_TOOL_SUMMARIES: Record<ToolName, string> = {
  get_human_services: 'The services catalog, the operator profile and policy, the limits, and live coverage (same as GET /api/v1/coverage).',
  submit_human_task:
    'Submit a task (same fields as POST /api/v1/tasks); asynchronous: returns a task_id. May be called as an MCP task (tasks/result gives the final task). dry_run: true runs every check and creates nothing.',
  check_task_status:
    'A task and its status by task_id (same as GET /api/v1/tasks/{task_id}); wait_seconds (up to 50) with known_updated_at holds until it changes.',
  message_human_operator: 'Send the operator a message (same fields as POST /api/v1/messages).',
  answer_operator_question:
    'Answer the question the operator asked when a task shows awaiting_answer true (same as POST /api/v1/tasks/{task_id}/questions/{question_id}/answer).',
  check_message_thread: 'Read the operator’s replies to a message with its thread_token (same as GET /api/v1/messages/{message_id} with the token as Bearer).',
  list_my_tasks: 'A verified (Web Bot Auth signed) agent’s own tasks, newest update first, cursor-paginated (same as GET /api/v1/tasks).',
};

/** The tools of the MCP server, named by the server's own list so the documents cannot drift from it. */
export const MCP_TOOLS = TOOL_NAMES.map((name) => ({ name, description: MCP_TOOL_SUMMARIES[name] }));

export function endpoints(base: string) {
  const api = `${base}/api/${API_VERSION}`;
  return {
    submit_task: {
      method: 'POST',
      url: `${api}/tasks`,
      description:
        'Submit a task; 202 with task_id, status_url and status_page. With ?dry_run=true: every check a submission runs, nothing created, no quota used (a read); 200 {dry_run, would_accept, limits} or the error the submission would get.',
    },
    coverage: {
      method: 'GET',
      url: `${api}/coverage`,
      description:
        'Before you ask: per task type, time to seen, accepted and delivered (p50/p90 over the last 30 days), acceptance rate and deliveries; whether tasks are taken now, operators on duty, open tasks.',
    },
    task_status: {
      method: 'GET',
      url: `${api}/tasks/{task_id}`,
      description:
        'A task and its status, with an ETag. If-None-Match: 304 while unchanged; with Prefer: wait=N (1-60) held until it changes. Otherwise poll every few minutes at most.',
    },
    send_message: { method: 'POST', url: `${api}/messages`, description: 'Write to the operator; answers come by e-mail to reply_to.' },
    services: { method: 'GET', url: `${api}/services`, description: 'The catalog, cursor-paginated (limit, cursor).' },
    health: { method: 'GET', url: `${api}/health`, description: 'Health of the service and its store.' },
    readiness: {
      method: 'GET',
      url: `${api}/health/ready`,
      description: 'Readiness for orchestrators: store, migrations and workers; 503 until an instance can serve.',
    },
    mcp: {
      method: 'POST',
      url: `${base}/mcp`,
      transport: 'streamable-http',
      server_card: `${base}/.well-known/mcp`,
      description: 'The same capabilities as MCP tools.',
    },
    status_page: { method: 'GET', url: `${base}/tasks?id={task_id}`, description: 'The human status page of a task.' },
    web_form: { method: 'GET', url: `${base}/`, description: 'The home page with a submission form for people.' },
  };
}

/** path → absolute URL of every document, keyed by id. */
export function documentUrls(base: string): Record<string, string> {
  return Object.fromEntries(DOCUMENTS.map((d) => [d.id, `${base}${d.path}`]));
}
