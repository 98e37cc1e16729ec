import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { DocsDeps } from '../../docs/context.js';
import { buildDocumentSet, type DocumentSet, documentSet, readLive } from '../../docs/document-set.js';
import { withLive } from '../../docs/documents.js';
import { jsonBody, type StaticBody, sendBody } from '../../docs/http.js';
import { liveFigures } from '../../docs/live.js';
import { ErrorSchema, ServicesPageSchema } from '../../domain/schemas.js';
import { listServices } from '../../services/services-catalog.js';

type Json = Record<string, unknown>;

const STATIC_MAX_AGE = 300;
const LIVE_MAX_AGE = 5;

const notModified = { type: 'null', description: 'Not modified: the ETag in If-None-Match still matches.' };
const jsonDocument = (description: string) => ({ 200: { description, type: 'object', additionalProperties: true }, 304: notModified });
const textDocument = (description: string) => ({ 200: { description, type: 'string' }, 304: notModified });

/** The machine-readable documents and GET /api/v1/services. */
export async function registerDocuments(app: FastifyInstance, deps: DocsDeps): Promise<void> {
  const live = liveFigures(deps);
  app.addHook('onReady', async () => {
    deps.documents.publish(await buildDocumentSet(app, deps, live));
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
  serveStatic(
    '/.well-known/oauth-protected-resource',
    'getProtectedResourceMetadata',
    'OAuth protected-resource metadata (RFC 9728): nothing is token-protected',
    (b) => b.protectedResource,
  );
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
  // Typed from the schema; with attachValidation the values may still be off, and listServices checks them.
  app.withTypeProvider<TypeBoxTypeProvider>().get(
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
      const { limit, cursor } = request.query;
      return listServices(deps, { limit, cursor });
    },
  );
}
