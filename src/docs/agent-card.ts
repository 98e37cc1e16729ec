import { canonicalJson } from '../domain/canonical.js';
import { type DetachedSignature, signDetached } from '../receipts/sign.js';
import type { DocsDeps } from './context.js';
import { buildManifest } from './documents.js';

/**
 * The A2A v1 agent card at /.well-known/agent-card.json (a2a-protocol.org, "Agent Card"): name,
 * description, version, supportedInterfaces, capabilities, default modes and skills, taken from
 * the platform manifest (/agent.json) so the two can never disagree.
 *
 * The service speaks no A2A protocol binding (JSONRPC, GRPC or HTTP+JSON): its interfaces are
 * MCP and a REST API described by OpenAPI. supportedInterfaces lists them under those names (the
 * field is an open string), so an A2A client looking for an A2A binding skips them instead of
 * sending A2A messages the service would not understand.
 *
 * Signed as A2A allows: `signatures` holds a detached JWS over the RFC 8785 canonical JSON of the
 * card without `signatures`, with the receipt key (the header's kid and jku name it in
 * /.well-known/jwks.json).
 */

/** The A2A specification version the card follows. */
export const A2A_PROTOCOL_VERSION = '1.0';

export interface AgentCardSignature extends DetachedSignature {
  header?: Record<string, unknown>;
}

export function buildAgentCard(deps: DocsDeps) {
  const base = deps.config.baseUrl;
  const manifest = buildManifest(deps);
  return {
    name: manifest.name,
    description: manifest.description,
    version: manifest.version,
    provider: manifest.provider,
    documentationUrl: `${base}/llms.txt`,
    supportedInterfaces: [
      { url: `${base}/mcp`, protocolBinding: 'MCP', protocolVersion: A2A_PROTOCOL_VERSION },
      { url: `${base}/api/v1`, protocolBinding: 'REST', protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    defaultInputModes: manifest.defaultInputModes,
    defaultOutputModes: manifest.defaultOutputModes,
    skills: manifest.skills,
  };
}

export type AgentCard = ReturnType<typeof buildAgentCard> & { signatures?: AgentCardSignature[] };

/** The bytes the signature covers: the canonical card without its signatures. */
export function agentCardSigningInput(card: AgentCard): string {
  const { signatures: _omitted, ...unsigned } = card;
  return canonicalJson(unsigned);
}

export async function signAgentCard(deps: DocsDeps, card: AgentCard): Promise<AgentCard> {
  const signature = await signDetached(deps.store.db, agentCardSigningInput(card), deps.clock.now(), {
    typ: 'JOSE',
    jku: `${deps.config.baseUrl}/.well-known/jwks.json`,
  });
  return { ...card, signatures: [signature] };
}
