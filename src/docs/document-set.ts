import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Block, toMarkdown } from '../domain/markup.js';
import { buildAgentCard, signAgentCard } from './agent-card.js';
import type { DocsDeps } from './context.js';
import { buildCapabilities, buildHuman, buildManifest, buildProtectedResource, buildServices } from './documents.js';
import { jsonBody, type StaticBody, staticBody } from './http.js';
import type { LiveFigures, LiveSource } from './live.js';
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

/** Holds the documents of a running app: built in src/deps.ts, filled when the app is ready. */
export class DocumentRegistry {
  private current: DocumentSet | undefined;

  publish(set: DocumentSet): void {
    this.current = set;
  }

  get(): DocumentSet {
    if (!this.current) throw new Error('documents are generated when the app is ready');
    return this.current;
  }
}

/** The documents of a running app (after ready); the pages render them for people. */
export function documentSet(deps: Pick<DocsDeps, 'documents'>): DocumentSet {
  return deps.documents.get();
}

/** The live figures, or null when the store cannot give them (documents still answer). */
export async function readLive(deps: DocsDeps, request?: FastifyRequest): Promise<LiveFigures | null> {
  try {
    return await documentSet(deps).live();
  } catch (error) {
    (request?.log ?? deps.log).warn({ err: error }, 'live figures unavailable');
    return null;
  }
}

/**
 * Generates every document once; `app` must be ready (the OpenAPI document lists its routes).
 * Asynchronous because the A2A agent card is signed with the receipt key from the store.
 */
export async function buildDocumentSet(app: FastifyInstance, deps: DocsDeps, live: LiveSource): Promise<DocumentSet> {
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
