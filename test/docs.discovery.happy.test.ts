import { createLocalJWKSet, decodeProtectedHeader, flattenedVerify, type JSONWebKeySet } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/domain/canonical.js';
import { TASK_TYPES } from '../src/domain/tasks/task.js';
import { SERVER_CARD_PATHS, SERVER_CARD_SCHEMA } from '../src/mcp/card.js';
import { SERVICE_VERSION } from '../src/version.js';
import { connectClient } from './mcp.support.js';
import { STORES, useTestApp } from './support/app.js';

/**
 * Discovery in its current forms (issue 14): the A2A v1 agent card at
 * /.well-known/agent-card.json, signed with the receipt key (detached JWS over the RFC 8785
 * canonical card), and the MCP server card at every path clients probe, all from one source.
 */

type Json = Record<string, unknown>;
const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

describe.each(STORES)('discovery documents on %s', (store) => {
  const t = useTestApp({ store });
  let card: Json;
  let manifest: Json;
  let jwks: JSONWebKeySet;
  beforeAll(async () => {
    card = (await (await fetch(`${t.url}/.well-known/agent-card.json`)).json()) as Json;
    manifest = (await (await fetch(`${t.url}/agent.json`)).json()) as Json;
    jwks = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
  });

  it('serves an A2A v1 agent card with the fields A2A requires, agreeing with the manifest', async () => {
    const res = await fetch(`${t.url}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    for (const field of ['name', 'description', 'version', 'supportedInterfaces', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills'])
      expect(card, field).toHaveProperty(field);
    expect(card.version).toBe(SERVICE_VERSION);
    for (const field of ['name', 'description', 'version', 'provider']) expect(card[field], field).toEqual(manifest[field]);
    expect(card).not.toHaveProperty('url');
    // The two A2A bindings the service speaks (docs/a2a.md); gRPC is not served.
    const interfaces = card.supportedInterfaces as Array<{ url: string; protocolBinding: string; protocolVersion: string }>;
    expect(interfaces).toEqual([
      { url: `${t.config.baseUrl}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${t.config.baseUrl}/a2a/v1`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ]);
    // One skill per task type, its id the task_type.
    expect((card.skills as Array<{ id: string }>).map((s) => s.id)).toEqual([...TASK_TYPES]);
  });

  it('signs the card: a detached JWS over its RFC 8785 canonical form, with a published receipt key', async () => {
    const signatures = card.signatures as Array<{ protected: string; signature: string }>;
    expect(signatures).toHaveLength(1);
    const [signature] = signatures;
    const header = decodeProtectedHeader({ protected: signature?.protected ?? '', payload: '', signature: '' } as never);
    expect(header).toMatchObject({ alg: 'EdDSA', jku: `${t.config.baseUrl}/.well-known/jwks.json` });
    expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
    const { signatures: _s, ...unsigned } = card;
    const keys = createLocalJWKSet(jwks);
    const verified = await flattenedVerify(
      { protected: signature?.protected ?? '', payload: b64url(canonicalJson(unsigned)), signature: signature?.signature ?? '' },
      keys,
    );
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual(unsigned);
    // A changed card does not verify.
    const tampered = { ...unsigned, name: 'Someone else' };
    await expect(
      flattenedVerify({ protected: signature?.protected ?? '', payload: b64url(canonicalJson(tampered)), signature: signature?.signature ?? '' }, keys),
    ).rejects.toThrow();
  });

  it('serves one MCP server card at every path, in the current server-card form', async () => {
    const bodies: string[] = [];
    for (const path of SERVER_CARD_PATHS) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      bodies.push(await res.text());
    }
    expect(new Set(bodies).size).toBe(1);
    const server = JSON.parse(bodies[0] ?? '{}') as Json;
    expect(server.$schema).toBe(SERVER_CARD_SCHEMA);
    expect(server.version).toBe(SERVICE_VERSION);
    expect(server.authentication).toMatchObject({ required: false });
    const remotes = server.remotes as Array<{ type: string; url: string; supportedProtocolVersions: string[] }>;
    expect(remotes).toHaveLength(1);
    expect(remotes[0]).toMatchObject({ type: 'streamable-http', url: `${t.config.baseUrl}/mcp` });
    expect(remotes[0]?.supportedProtocolVersions).toEqual(expect.arrayContaining(['2025-11-25', '2025-06-18', '2025-03-26']));
  });

  it('the documents agree on versions, the MCP endpoint and the tools', async () => {
    const openapi = (await (await fetch(`${t.url}/openapi.json`)).json()) as { info: { version: string } };
    const server = (await (await fetch(`${t.url}/.well-known/mcp.json`)).json()) as { version: string; tools: Array<{ name: string }> };
    expect(new Set([openapi.info.version, server.version, card.version, manifest.version])).toEqual(new Set([SERVICE_VERSION]));
    const client = await connectClient(t);
    const { tools } = await client.listTools();
    await client.close();
    expect(server.tools.map((tool) => tool.name).sort()).toEqual(tools.map((tool) => tool.name).sort());
    const llms = await (await fetch(`${t.url}/llms.txt`)).text();
    expect(llms).toContain(`${t.config.baseUrl}/.well-known/agent-card.json`);
  });
});
