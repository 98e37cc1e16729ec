import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ErrorSchema, ServicesPageSchema } from '../domain/schemas.js';
import type { ServiceDeps } from '../services/deps.js';
import { listServices } from '../services/services-catalog.js';
import { buildAgentCard, signAgentCard } from './agent-card.js';
import { buildCapabilities, buildHuman, buildManifest, buildProtectedResource, buildServices, withLive } from './documents.js';
import { jsonBody, sendBody, staticBody, type StaticBody } from './http.js';
import { liveFigures, type LiveFigures, type LiveSource } from './live.js';
import { toMarkdown, type Block } from './markup.js';
import { openApiDocument } from './openapi.js';
import { apiDoc, indexDoc, llmsFullTxt, llmsTxt } from './text.js';

type Json = Record<string, unknown>;

/** Every document, generated once when the app is ready (the OpenAPI document needs every route). */
export interface DocumentSet {
  manifest: Json;
  /** The signed A2A v1 agent card. */
  agentCard: Json;
  human: Json;
  capabilities: Json;
  services: Json;
  protectedResource: Json;
  openapi: Json;
  indexBlocks: Block[];
  apiBlocks: Block[];
  bodies: {
    manifest: StaticBody;
    agentCard: StaticBody;
    services: StaticBody;
    protectedResource: StaticBody;
    openapi: StaticBody;
    llms: StaticBody;
    llmsFull: StaticBody;
    index: StaticBody;
    api: StaticBody;
  };
  /** The live figures, cached for a few seconds. */
  live: LiveSource;
}

const sets = new WeakMap<ServiceDeps, DocumentSet>();

/** The documents of a running app (after ready); the pages render them for people. */
export function documentSet(deps: ServiceDeps): DocumentSet {
  const set = sets.get(deps);
  if (!set) throw new Error('documents are generated when the app is ready');
  return set;
}

/** The live figures, or null when the store cannot give them (documents still answer). */
export async function readLive(deps: ServiceDeps, request?: FastifyRequest): Promise<LiveFigures | null> {
  try {
    return await documentSet(deps).live();
  } catch (error) {
    (request?.log ?? deps.log).warn({ err: error }, 'live figures unavailable');
    return null;
  }
}

async function build(app: FastifyInstance, deps: ServiceDeps, live: LiveSource): Promise<DocumentSet> {
  const manifest = buildManifest(deps) as Json;
  const services = buildServices(deps) as Json;
  const protectedResource = buildProtectedResource(deps) as Json;
  const openapi = openApiDocument(app);
  const indexBlocks = indexDoc(deps);
  const apiBlocks = apiDoc(deps, openapi);
  const markdown = 'text/markdown; charset=utf-8';
  const llms = llmsTxt(deps);
  const agentCard = (await signAgentCard(deps, buildAgentCard(deps))) as Json;
  return {
    manifest,
    agentCard,
    human: buildHuman(deps) as Json,
    capabilities: buildCapabilities(deps) as Json,
    services,
    protectedResource,
    openapi,
    indexBlocks,
    apiBlocks,
    bodies: {
      manifest: jsonBody(manifest),
      agentCard: jsonBody(agentCard),
      services: jsonBody(services),
      protectedResource: jsonBody(protectedResource),
      openapi: jsonBody(openapi, true),
      llms: staticBody(llms, 'text/plain; charset=utf-8'),
      llmsFull: staticBody(llmsFullTxt(llms, toMarkdown(indexBlocks), toMarkdown(apiBlocks)), 'text/plain; charset=utf-8'),
      index: staticBody(toMarkdown(indexBlocks), markdown),
      api: staticBody(toMarkdown(apiBlocks), markdown),
    },
    live,
  };
}

const STATIC_MAX_AGE = 300;
const LIVE_MAX_AGE = 5;

const notModified = { type: 'null', description: 'Not modified: the ETag in If-None-Match still matches.' };
const jsonDocument = (description: string) => ({ 200: { description, type: 'object', additionalProperties: true }, 304: notModified });
const textDocument = (description: string) => ({ 200: { description, type: 'string' }, 304: notModified });

/** The machine-readable documents and GET /api/v1/services. */
export async function registerDocuments(app: FastifyInstance, deps: ServiceDeps): Promise<void> {
  const live = liveFigures(deps);
  app.addHook('onReady', async () => {
    sets.set(deps, await build(app, deps, live));
  });
  const bodies = () => documentSet(deps).bodies;

  /** `produces`: the media type of a text document (JSON otherwise). */
  const serveStatic = (path: string, operationId: string, summary: string, pick: (b: DocumentSet['bodies']) => StaticBody, produces?: string) => {
    app.get(
      path,
      {
        config: { kind: 'read' },
        schema: {
          operationId,
          summary,
          tags: ['documents'],
          ...(produces ? { produces: [produces] } : {}),
          response: produces ? textDocument(summary) : jsonDocument(summary),
        },
      },
      async (request, reply) => sendBody(request, reply, pick(bodies()), STATIC_MAX_AGE),
    );
  };

  serveStatic('/agent.json', 'getAgentManifest', 'Platform manifest and A2A-style agent card', (b) => b.manifest);
  serveStatic('/.well-known/agent.json', 'getWellKnownAgentManifest', 'Platform manifest and A2A-style agent card (well-known location)', (b) => b.manifest);
  serveStatic('/.well-known/agent-card.json', 'getAgentCard', 'A2A v1 agent card, signed with the receipt key', (b) => b.agentCard);
  serveStatic('/.well-known/services.json', 'getServicesDocument', 'Services catalog', (b) => b.services);
  serveStatic('/.well-known/oauth-protected-resource', 'getProtectedResourceMetadata', 'OAuth protected-resource metadata (RFC 9728): nothing is token-protected', (b) => b.protectedResource);
  serveStatic('/openapi.json', 'getOpenApi', 'This OpenAPI 3.0 document', (b) => b.openapi);
  serveStatic('/llms.txt', 'getLlmsTxt', 'Plain-text guide for language models', (b) => b.llms, 'text/plain');
  serveStatic('/llms-full.txt', 'getLlmsFullTxt', 'llms.txt, the overview and the whole API reference in one file', (b) => b.llmsFull, 'text/plain');
  serveStatic('/index.md', 'getIndexMarkdown', 'Overview in markdown', (b) => b.index, 'text/markdown');
  serveStatic('/api.md', 'getApiMarkdown', 'API reference in markdown', (b) => b.api, 'text/markdown');

  const serveLive = (path: string, operationId: string, summary: string, pick: (s: DocumentSet) => Json) => {
    app.get(
      path,
      { config: { kind: 'read' }, schema: { operationId, summary, tags: ['documents'], response: jsonDocument(summary) } },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const doc = withLive(pick(documentSet(deps)), await readLive(deps, request));
        return sendBody(request, reply, jsonBody(doc), LIVE_MAX_AGE);
      },
    );
  };
  serveLive('/.well-known/human.json', 'getHumanDocument', "The operator's role, policy and availability, with live figures", (s) => s.human);
  serveLive('/.well-known/capabilities.json', 'getCapabilities', 'Structured capabilities, with live figures', (s) => s.capabilities);

  const max = deps.config.limits.servicesPageMax;
  app.get(
    '/api/v1/services',
    {
      config: { kind: 'read' },
      // The service function is the one validator (MCP calls it too); the schema documents the query.
      attachValidation: true,
      schema: {
        operationId: 'listServices',
        summary: 'The services catalog, cursor-paginated',
        description: `Pass next_cursor back as cursor until it is null. limit 1 to ${max} (default 20).`,
        tags: ['services'],
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: max, description: `Page size, 1 to ${max}; default 20.` })),
          cursor: Type.Optional(Type.String({ maxLength: 400, description: 'Opaque next_cursor from the previous page.' })),
        }),
        response: { 200: ServicesPageSchema, 400: ErrorSchema },
      },
    },
    async (request) => {
      const query = request.query as { limit?: unknown; cursor?: unknown };
      return listServices(deps, { limit: query.limit, cursor: query.cursor });
    },
  );
}
