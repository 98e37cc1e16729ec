import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { connectClient, type Json } from './mcp.support.js';
import { STORES, useSuiteResource, useTestApp } from './support/app.js';
import { ANTHROPIC_TOOLS_SCHEMA, OPENAI_TOOLS_SCHEMA, SERVER_CARD_SCHEMA } from './support/published-schemas.js';

/** Discovery of both MCP revisions (server card, AI catalog, RFC 9727 API catalog, manifest, llms.txt) and the tool exports. */

function validator(schema: object, draft2020 = false) {
  const ajv = draft2020 ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true });
  (addFormatsModule as unknown as { default: (a: Ajv) => void }).default(ajv as Ajv);
  return ajv.compile(schema);
}

describe.each(STORES)('MCP discovery and tool exports on %s', (store) => {
  const t = useTestApp({ store });
  const client = useSuiteResource(
    () => connectClient(t),
    (c) => c.close(),
  );
  const json = async (path: string) => (await (await fetch(`${t.url}${path}`)).json()) as Json;

  it('serves a server card valid against the server-card schema, naming both protocol revisions and the listed tools', async () => {
    const card = await json('/mcp/server-card');
    const validate = validator(SERVER_CARD_SCHEMA, true);
    expect(validate(card), JSON.stringify(validate.errors)).toBe(true);
    const [remote] = card.remotes as Json[];
    expect(remote?.supportedProtocolVersions).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25']));
    expect((remote?.supportedProtocolVersions as string[])[0]).toBe('2026-07-28');
    expect(card.capabilities).toMatchObject({ extensions: { 'io.modelcontextprotocol/tasks': {} } });
    const { tools } = await client.listTools();
    expect(card.tools).toEqual(JSON.parse(JSON.stringify(tools)));
    expect(await json('/.well-known/mcp/server-card')).toEqual(card);
  });

  it("docs/mcp.md's server-card example has the card's fields and lists the revisions in the card's order (issue 51)", async () => {
    const card = await json('/mcp/server-card');
    const doc = readFileSync('docs/mcp.md', 'utf8');
    const block = /return the same card[\s\S]*?```json\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const example = JSON.parse(block ?? '{}') as Json;
    expect(Object.keys(example)).toEqual(Object.keys(card));
    expect(example.protocolVersion).toBe(card.protocolVersion);
    const shown = ((example.remotes as Json[])[0]?.supportedProtocolVersions as string[]).filter((v) => v !== '…');
    const served = (card.remotes as Json[])[0]?.supportedProtocolVersions as string[];
    expect(served.slice(0, shown.length)).toEqual(shown);
    expect(Object.keys(example.capabilities as Json)).toEqual(Object.keys(card.capabilities as Json));
  });

  it('lists the server card and the OpenAPI document in /.well-known/ai-catalog.json', async () => {
    const catalog = await json('/.well-known/ai-catalog.json');
    const urls = (catalog.agents as Json[]).map((entry) => entry.cardUrl);
    expect(urls).toEqual([`${t.config.baseUrl}/mcp/server-card`, `${t.config.baseUrl}/openapi.json`]);
    for (const url of urls) expect((await fetch(String(url).replace(t.config.baseUrl, t.url))).status).toBe(200);
  });

  it('answers /.well-known/api-catalog as an RFC 9727 linkset: OpenAPI, api.md and health', async () => {
    const res = await fetch(`${t.url}/.well-known/api-catalog`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/linkset\+json/);
    const { linkset } = (await res.json()) as { linkset: Json[] };
    const api = linkset.find((context) => context['service-desc']);
    const href = (rel: string) => ((api?.[rel] as Json[])[0]?.href as string).replace(t.config.baseUrl, t.url);
    expect(href('service-desc')).toMatch(/\/openapi\.json$/);
    expect(href('service-doc')).toMatch(/\/api\.md$/);
    expect(href('status')).toMatch(/\/api\/v1\/health$/);
    for (const rel of ['service-desc', 'service-doc', 'status']) expect((await fetch(href(rel))).status, rel).toBe(200);
    expect((linkset[0]?.item as Json[])[0]?.href).toBe(api?.anchor);
  });

  it('says which revisions are served in /agent.json and llms.txt', async () => {
    const manifest = await json('/agent.json');
    expect(JSON.stringify(manifest)).toContain('"protocol_versions":["2026-07-28","2025-11-25"]');
    const llms = await (await fetch(`${t.url}/llms.txt`)).text();
    expect(llms).toMatch(/2026-07-28/);
    expect(llms).toMatch(/2025-11-25/);
  });

  it('exports the tools as OpenAI and Anthropic tool definitions, valid against those formats and generated from the same definitions', async () => {
    const { tools } = await client.listTools();
    const openai = (await json('/tools/openai.json')) as unknown as Json[];
    const anthropic = (await json('/tools/anthropic.json')) as unknown as Json[];
    const validOpenAi = validator(OPENAI_TOOLS_SCHEMA);
    const validAnthropic = validator(ANTHROPIC_TOOLS_SCHEMA);
    expect(validOpenAi(openai), JSON.stringify(validOpenAi.errors)).toBe(true);
    expect(validAnthropic(anthropic), JSON.stringify(validAnthropic.errors)).toBe(true);
    expect(openai.map((tool) => (tool.function as Json).name)).toEqual(tools.map((tool) => tool.name));
    for (const [i, tool] of tools.entries()) {
      expect((openai[i]?.function as Json).parameters).toEqual(JSON.parse(JSON.stringify(tool.inputSchema)));
      expect(anthropic[i]).toMatchObject({ name: tool.name, input_schema: JSON.parse(JSON.stringify(tool.inputSchema)) });
      expect(String(anthropic[i]?.description).startsWith(tool.description ?? '')).toBe(true);
      expect((openai[i]?.function as Json).description).toBe(anthropic[i]?.description);
    }
  });

  it('says in each exported tool where to send its call: the MCP URL, and the REST route it maps to (issue 51)', async () => {
    const openapi = await json('/openapi.json');
    const paths = openapi.paths as Record<string, Record<string, unknown>>;
    for (const file of ['/tools/openai.json', '/tools/anthropic.json']) {
      const exported = (await json(file)) as unknown as Json[];
      for (const entry of exported) {
        const name = String((entry.function as Json | undefined)?.name ?? entry.name);
        const description = String((entry.function as Json | undefined)?.description ?? entry.description);
        const served = /Where to send a call: MCP, POST (\S+) \(JSON-RPC tools\/call, name "([a-z_]+)"[^)]*\); or REST, (GET|POST) (\S+?)\.$/.exec(description);
        expect(served, `${file} ${name}: ${description.slice(-300)}`).not.toBeNull();
        const [, mcpUrl, called, method, restUrl] = served as unknown as [string, string, string, string, string];
        expect(mcpUrl).toBe(`${t.config.baseUrl}/mcp`);
        expect(called).toBe(name);
        // The REST twin is a route of the API document, with that method.
        const path = restUrl.replace(t.config.baseUrl, '');
        expect(paths[path]?.[method.toLowerCase()], `${name}: ${method} ${path}`).toBeDefined();
      }
    }
    // The addresses work: the catalog tool through the MCP URL named, and through its REST twin.
    const viaMcp = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_human_services', arguments: {} } }),
    });
    expect(viaMcp.status).toBe(200);
    expect((await fetch(`${t.url}/api/v1/services`)).status).toBe(200);
  });
});
