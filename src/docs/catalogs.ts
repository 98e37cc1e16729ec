import { MCP_REVISIONS } from '../mcp/revisions.js';
import { API_VERSION, SERVICE_NAME } from '../version.js';
import { type StaticBody, staticBody } from './http.js';

/**
 * The two discovery catalogs: /.well-known/ai-catalog.json (the AI Card project's catalog: one
 * entry for the MCP server card, one for the OpenAPI document) and /.well-known/api-catalog
 * (RFC 9727: a linkset pointing at the OpenAPI document, api.md and the health endpoint).
 */

/** The AI Catalog specification (the Agent-Card/ai-card repository's ai-catalog CDDL), v1. */
const AI_CATALOG_SPEC = 'https://github.com/Agent-Card/ai-card/blob/main/type/ai-catalog-cddl.md';

export function aiCatalog(base: string, title: string, updatedAt: string): StaticBody {
  const catalog = {
    $schema: AI_CATALOG_SPEC,
    specVersion: '1.0.0',
    host: { name: title, documentationUrl: `${base}/llms.txt` },
    agents: [
      {
        id: `${base}/mcp`,
        name: `${title} (MCP)`,
        description: `MCP server card of the tool server at ${base}/mcp; protocol revisions ${MCP_REVISIONS.join(' and ')}.`,
        tags: ['mcp', ...MCP_REVISIONS.map((revision) => `mcp-${revision}`)],
        cardUrl: `${base}/mcp/server-card`,
        updatedAt,
      },
      {
        id: `${base}/api/${API_VERSION}`,
        name: `${title} (REST API)`,
        description: 'OpenAPI 3 document of the REST API: the same capabilities as the MCP tools.',
        tags: ['openapi', 'rest'],
        cardUrl: `${base}/openapi.json`,
        updatedAt,
      },
    ],
  };
  return staticBody(`${JSON.stringify(catalog, null, 2)}\n`, 'application/json; charset=utf-8');
}

export const LINKSET_MEDIA_TYPE = 'application/linkset+json';

/** RFC 9727: the catalog's own item links, then one linkset context per API with its description, documentation and status. */
export function apiCatalog(base: string): StaticBody {
  const api = `${base}/api/${API_VERSION}`;
  const linkset = {
    linkset: [
      {
        anchor: `${base}/.well-known/api-catalog`,
        item: [{ href: api, title: `${SERVICE_NAME} REST API ${API_VERSION}` }],
      },
      {
        anchor: api,
        'service-desc': [{ href: `${base}/openapi.json`, type: 'application/vnd.oai.openapi+json' }],
        'service-doc': [{ href: `${base}/api.md`, type: 'text/markdown' }],
        status: [{ href: `${api}/health`, type: 'application/json' }],
      },
    ],
  };
  return staticBody(`${JSON.stringify(linkset, null, 2)}\n`, `${LINKSET_MEDIA_TYPE}; profile="https://www.rfc-editor.org/info/rfc9727"`);
}
