import { canonicalizeAgentCard } from '@a2a-js/sdk';
import { TASK_TYPES } from '../domain/tasks/task.js';
import { type DetachedSignature, signDetached } from '../receipts/sign.js';
import type { DocsDeps } from './context.js';
import { buildManifest } from './documents.js';

/**
 * The A2A v1 agent card at /.well-known/agent-card.json (a2a-protocol.org, "Agent Card"): name,
 * description, version, supportedInterfaces, capabilities, default modes and skills, taken from
 * the platform manifest (/agent.json) so the two can never disagree.
 *
 * The service is an A2A 1.0 agent (docs/a2a.md): supportedInterfaces declares its JSON-RPC binding
 * at /a2a and its HTTP+JSON binding under /a2a/v1; it streams and pushes; one skill per task type
 * (id = the task_type). No extended card is declared.
 *
 * Signed as A2A 1.0 §8.4 defines: `signatures` holds a detached JWS (typ JOSE, kid, jku) over the
 * card's canonical form, computed by the SDK's own canonicalizeAgentCard (the card's ProtoJSON
 * without `signatures`, defaults and empty values left out, RFC 8785), with the receipt key
 * (/.well-known/jwks.json). The card carries no default or empty value, so that form is also the
 * RFC 8785 canonical JSON of the card as served.
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
      { url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION },
      { url: `${base}/a2a/v1`, protocolBinding: 'HTTP+JSON', protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: TASK_TYPES.map((taskType) => skillOf(deps, taskType)),
  };
}

/** One skill per task type: what the operator offers under it (the catalog's entries), or the type's plain name. */
function skillOf(deps: DocsDeps, taskType: (typeof TASK_TYPES)[number]) {
  const entries = deps.catalog.filter((entry) => entry.task_type === taskType);
  const plain = taskType.replaceAll('_', ' ');
  const examples = entries.map((entry) => entry.example_request.description).filter((text): text is string => typeof text === 'string' && text !== '');
  return {
    id: taskType,
    name: entries[0]?.title ?? plain.charAt(0).toUpperCase() + plain.slice(1),
    description:
      entries.map((entry) => entry.description).join(' ') ||
      `Tasks of type ${taskType}: send a message whose text describes the task, with {"task_type": "${taskType}"} in a data part.`,
    tags: [taskType, ...(entries.some((entry) => entry.location_required) ? ['in-person'] : ['remote'])],
    ...(examples.length > 0 ? { examples } : {}),
    inputModes: ['text/plain', 'application/json'],
    outputModes: ['text/plain', 'application/json'],
  };
}

export type AgentCard = ReturnType<typeof buildAgentCard> & { signatures?: AgentCardSignature[] };

/** The bytes the signature covers: the card's canonical form (A2A 1.0 §8.4.1), without its signatures. */
export function agentCardSigningInput(card: AgentCard): string {
  const { signatures: _omitted, ...unsigned } = card;
  return canonicalizeAgentCard(unsigned as unknown as Parameters<typeof canonicalizeAgentCard>[0]);
}

export async function signAgentCard(deps: DocsDeps, card: AgentCard): Promise<AgentCard> {
  const signature = await signDetached(deps.store.db, agentCardSigningInput(card), deps.clock.now(), {
    typ: 'JOSE',
    jku: `${deps.config.baseUrl}/.well-known/jwks.json`,
  });
  return { ...card, signatures: [signature] };
}
