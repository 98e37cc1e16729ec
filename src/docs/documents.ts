import { taskInputSchema } from '../domain/tasks/schemas.js';
import { CURRENT_STATUSES, DELIVERY_MODES, OUTPUT_FORMATS, TASK_TYPES } from '../domain/tasks/task.js';
import { MCP_REVISIONS, MCP_REVISIONS_NOTE } from '../mcp/revisions.js';
import type { ServiceDeps } from '../services/context.js';
import { API_VERSION, SERVICE_NAME, SERVICE_VERSION } from '../version.js';
import { structuredAnswersBlock } from './answers.js';
import type { DocsDeps } from './context.js';
import { DOCUMENTS, documentUrls, endpoints, MCP_TOOLS } from './endpoints.js';
import { publicLimits } from './limits.js';
import type { LiveFigures } from './live.js';
import { deprecationNotices } from './versions.js';
import { waitingBlock } from './waiting.js';

/**
 * The JSON documents, each built from the one source: the profile and catalog files, the running
 * limits, the versions in package.json and the TypeBox schemas. The static part of each is built
 * once at start; human.json and capabilities.json add the live figures per request.
 */

export const PRODUCT_NAME = 'Human-in-the-loop task service';
export const DOCUMENT_SCHEMA_VERSION = '1.0';

export function summary(_deps: ServiceDeps): string {
  return (
    'AI agents submit tasks that need a human — physical presence, perception or judgment. A human operator reviews every task, ' +
    'performs the accepted ones and delivers the result by e-mail or in the status response, with a signed receipt. ' +
    'No accounts, API keys or tokens; free during the pilot.'
  );
}

function serviceBlock(deps: ServiceDeps) {
  return { name: SERVICE_NAME, title: PRODUCT_NAME, version: SERVICE_VERSION, api_version: API_VERSION, base_url: deps.config.baseUrl };
}

function authentication() {
  return {
    required: false,
    note: 'Task submission, status, messages, health, services and the MCP server need no authentication: no API keys, OAuth, accounts or tokens. Send no Authorization header. Access to a task is by knowledge of its unguessable task_id.',
    abuse_control: [
      'human review of every task',
      'MX check of contact_email and reply_to',
      'per-client rate limits (a client is its IP address)',
      'duplicate detection over 24 hours',
      'a blocklist (403 client_blocked)',
    ],
  };
}

function pricing() {
  return {
    model: 'free pilot',
    price_usd: 0,
    note: 'The service is free during the pilot. budget_usd is accepted and ignored. The service never asks for payment or credentials.',
  };
}

function trust(deps: ServiceDeps) {
  const base = deps.config.baseUrl;
  const p = deps.profile;
  return {
    human_review: p.policy.review,
    will_not_do: p.policy.will_not_do,
    privacy: p.policy.privacy,
    never_asks_for: ['payment', 'credentials', 'passwords', 'one-time codes'],
    receipts: {
      format: 'compact JWS, EdDSA (Ed25519)',
      binds:
        'the deliverable hash (deliverable_sha256 over operator_notes), the request hash, the lifecycle timestamps and (receipt_version 2) every delivered file ' +
        '(attachments: name, media_type, size, sha256) to the task id',
      jwks: `${base}/.well-known/jwks.json`,
      log: {
        description:
          'Every receipt issued is a leaf of a public append-only Merkle log (RFC 9162 hashing), served as C2SP tlog-tiles; ' +
          "a task's inclusion proof (C2SP tlog-proof) is at /api/v1/tasks/{task_id}/receipt-proof, and its leaf index is receipt_log_index.",
        origin: deps.receiptLog.name,
        checkpoint: `${base}/log/checkpoint`,
        tiles: `${base}/log/tile/`,
        vkey: deps.receiptLog.vkey,
        vkey_url: `${base}/log/vkey`,
      },
    },
    test_tasks:
      'One small test task is fine; put the word "test" (the whole word, any case: not "testing" or "contest") in the description or requester and the operator treats it as one: the submission message confirms it, and it is left out of the published response times. There is no sandbox: this is production.',
  };
}

function operatorBlock(deps: ServiceDeps) {
  const o = deps.profile.operator;
  return {
    name: o.name,
    role: o.role,
    languages: o.languages,
    service_area: o.service_area,
    timezone: o.timezone,
    working_hours: o.working_hours,
    response_target_hours: deps.profile.response_target_hours,
  };
}

function taskTypes(deps: ServiceDeps) {
  return {
    accepted: [...TASK_TYPES],
    rejected: deps.profile.rejected_task_types,
    note: 'Tasks that are illegal, harmful, deceptive, unsafe or privacy-invasive are rejected at review whatever their type.',
  };
}

function versions(deps: DocsDeps) {
  return {
    current: API_VERSION,
    versions: deps.apiVersions.list().map((v) => ({
      version: v.version,
      base_url: `${deps.config.baseUrl}${v.prefix.replace(/\/$/, '')}`,
      status: v.deprecated_at ? 'deprecated' : 'current',
      deprecated_at: v.deprecated_at ?? null,
      sunset_at: v.sunset_at ?? null,
    })),
    policy:
      'The version is in the path. Within a version only additive changes happen; breaking changes ship as a new path version. A deprecated version keeps working at least 90 days after its replacement ships and announces retirement with Deprecation and Sunset headers and a notice here.',
    deprecations: deprecationNotices(deps.apiVersions.list(), deps.config.baseUrl),
  };
}

function mcpBlock(base: string) {
  return {
    url: `${base}/mcp`,
    transport: 'streamable-http',
    protocol_versions: [...MCP_REVISIONS],
    protocol_versions_note: MCP_REVISIONS_NOTE,
    authentication: 'none',
    server_card: `${base}/.well-known/mcp`,
    tools: MCP_TOOLS.map((t) => ({ ...t })),
  };
}

/** /agent.json and /.well-known/agent.json: the platform manifest, also shaped as an A2A-style agent card. */
export function buildManifest(deps: DocsDeps) {
  const base = deps.config.baseUrl;
  const docs = documentUrls(base);
  return {
    // A2A-style agent card fields (https://a2a-protocol.org): name, description, url, version, skills.
    name: PRODUCT_NAME,
    description: summary(deps),
    url: base,
    version: SERVICE_VERSION,
    documentationUrl: docs.api,
    provider: { organization: deps.profile.operator.name, url: base },
    capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: true },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json', 'text/plain'],
    skills: deps.catalog.map((entry) => ({
      id: entry.service_id,
      name: entry.title,
      description: entry.description,
      tags: [entry.task_type, ...(entry.location_required ? ['in-person'] : ['remote'])],
      examples: typeof entry.example_request.description === 'string' ? [entry.example_request.description] : [],
      inputModes: ['application/json'],
      outputModes: entry.output_formats.includes('structured_json') ? ['text/plain', 'application/json'] : ['text/plain'],
    })),
    // The platform manifest.
    schema_version: DOCUMENT_SCHEMA_VERSION,
    service: serviceBlock(deps),
    operator: operatorBlock(deps),
    how_it_works: [
      'POST a task to submit_task. The answer (202) carries task_id, status_url and status_page at once: submission never performs the work in the request.',
      `A human reviews it (target: within ${deps.profile.response_target_hours} hours): accepted (with an eta) or rejected (with a reason in operator_notes).`,
      'Accepted tasks are performed and delivered: by e-mail to contact_email (default), or as text in operator_notes when delivery is status_poll. A signed receipt comes with the delivery.',
      'Wait without polling: GET status_url with If-None-Match (its last ETag) and Prefer: wait=60 holds until the task changes; over MCP, check_task_status with wait_seconds, or submit_human_task as an MCP task (see waiting). Write to the operator with send_message; name the task_id to withdraw a task.',
      'Or be told instead: give callback_url (https) with the task and it receives a signed POST {type, timestamp, data} on task.accepted, task.delivered and task.rejected ' +
        '(Standard Webhooks headers webhook-id, webhook-timestamp, webhook-signature "v1a,<base64 Ed25519>" over "<id>.<timestamp>.<body>", verified with the keys of /.well-known/jwks.json).',
    ],
    waiting: waitingBlock(base),
    structured_answers: structuredAnswersBlock(),
    endpoints: endpoints(base),
    mcp: mcpBlock(base),
    authentication: authentication(),
    task_schema: taskInputSchema(deps.config.limits),
    task_types: taskTypes(deps),
    task_statuses: { current: [...CURRENT_STATUSES], retired: ['under_review', 'in_progress'], final: ['delivered', 'rejected'] },
    delivery_modes: [...DELIVERY_MODES],
    output_formats: [...OUTPUT_FORMATS],
    services: deps.catalog,
    pricing: pricing(),
    trust: trust(deps),
    limits: publicLimits(deps.config),
    api_versions: versions(deps),
    documents: docs,
  };
}

/** /.well-known/human.json: who the operator is, what they will not do, and when they work. */
export function buildHuman(deps: ServiceDeps) {
  const base = deps.config.baseUrl;
  return {
    schema_version: DOCUMENT_SCHEMA_VERSION,
    kind: 'human',
    service: serviceBlock(deps),
    operator: operatorBlock(deps),
    policy: { ...deps.profile.policy, rejected_task_types: deps.profile.rejected_task_types },
    availability: {
      working_hours: deps.profile.operator.working_hours,
      timezone: deps.profile.operator.timezone,
      response_target_hours: deps.profile.response_target_hours,
      note: 'Live figures below are computed from the store and refreshed every few seconds.',
    },
    contact: {
      how: 'POST a message to send_message (or the MCP tool message_human_operator); the operator answers by e-mail to reply_to.',
      send_message: `${base}/api/${API_VERSION}/messages`,
    },
    links: { manifest: `${base}/agent.json`, capabilities: `${base}/.well-known/capabilities.json`, services: `${base}/.well-known/services.json` },
  };
}

/** /.well-known/capabilities.json: what can be asked, through which interface, within which limits. */
export function buildCapabilities(deps: ServiceDeps) {
  const base = deps.config.baseUrl;
  return {
    schema_version: DOCUMENT_SCHEMA_VERSION,
    service: serviceBlock(deps),
    capabilities: deps.catalog.map((entry) => ({
      service_id: entry.service_id,
      task_type: entry.task_type,
      title: entry.title,
      description: entry.description,
      location_required: entry.location_required,
      output_formats: entry.output_formats,
      estimated_response_time: entry.estimated_response_time,
    })),
    task_types: taskTypes(deps),
    delivery_modes: [...DELIVERY_MODES],
    output_formats: [...OUTPUT_FORMATS],
    interfaces: {
      rest: { base_url: `${base}/api/${API_VERSION}`, openapi: `${base}/openapi.json` },
      mcp: mcpBlock(base),
      web: { home: `${base}/`, status_page: `${base}/tasks?id={task_id}` },
    },
    asynchronous: true,
    receipts: true,
    authentication: authentication(),
    pricing: pricing(),
    limits: publicLimits(deps.config),
  };
}

/** /.well-known/services.json: the catalog in one document. */
export function buildServices(deps: ServiceDeps) {
  const base = deps.config.baseUrl;
  return {
    schema_version: DOCUMENT_SCHEMA_VERSION,
    service: serviceBlock(deps),
    paginated: `${base}/api/${API_VERSION}/services`,
    services: deps.catalog,
  };
}

/** RFC 9728 metadata: the resource exists, and nothing protects it. */
export function buildProtectedResource(deps: ServiceDeps) {
  const base = deps.config.baseUrl;
  return {
    resource: base,
    authorization_servers: [],
    scopes_supported: [],
    bearer_methods_supported: [],
    resource_name: PRODUCT_NAME,
    resource_documentation: `${base}/api.md`,
    note: 'Nothing here is token-protected: the public endpoints take no Authorization header, no OAuth and no API key. Only the operator admin API uses a bearer key, which is not issued through OAuth.',
  };
}

/** The live figures as the documents carry them. */
export function withLive<T extends object>(doc: T, live: LiveFigures | null) {
  return { ...doc, live: live ?? { unavailable: true, note: 'The store did not answer; figures will return shortly.' } };
}

export { DOCUMENTS };
