import { createHash, verify as verifyBytes } from 'node:crypto';
import { isSignatureError, SignatureErrorCode, type UntrustedSignatureCandidate, verifySignature } from 'http-message-sig';
import type { Logger } from 'pino';
import { type Dictionary, parseDictionary, parseItem, Token } from 'structured-headers';
import { directoryUrlOf, invalidSignature } from '../domain/agents/directory.js';
import type { VerifiedAgent } from '../domain/caller.js';
import { AppError } from '../domain/errors.js';
import type { Clock } from '../domain/time.js';
import { claimNonce, deleteExpiredNonces } from '../store/agents/nonces-repo.js';
import type { Store } from '../store/db.js';
import type { AgentDirectories } from './agent-directories.js';

/**
 * Verifies a request's Web Bot Auth signature (RFC 9421 HTTP Message Signatures as
 * draft-meunier-web-bot-auth-architecture and draft-meunier-webbotauth-httpsig-protocol use them):
 * the signature base and its verification are http-message-sig's (by the drafts' author), the
 * fields are parsed with structured-headers. One function any door calls (REST, /mcp, the web
 * forms, A2A): it takes the request's method, target and fields, and answers the verified agent
 * or throws 400 `invalid_signature` naming why.
 *
 * What must hold, for every signature of the request (two signatures where one is bad: refused):
 * tag `web-bot-auth`; `created`, `expires` (at most MAX_WINDOW_S apart) and `keyid`; the window
 * holds now, give or take CLOCK_SKEW_S; covered components include `@authority` (the service's
 * own, from BASE_URL: a signature for another authority is refused) and `signature-agent` (String
 * form, or the Dictionary member it names with `;key=`); the key is an Ed25519 key of the
 * directory `Signature-Agent` names, whose RFC 7638 thumbprint is the keyid; a `nonce` was not
 * seen before within the window (on PostgreSQL in the store, so on every instance).
 */

export const TAG = 'web-bot-auth';
export const MAX_WINDOW_S = 300;
export const CLOCK_SKEW_S = 30;
/** More signatures than this on one request are refused (each costs a verification). */
const MAX_SIGNATURES = 4;
/** Field values longer than this are refused before parsing. */
const MAX_FIELD_CHARS = 8192;
/** Signature-Agent values remembered with their directories; the oldest is dropped beyond. */
const MAX_AGENT_FIELDS = 1000;
/** What every signature must carry (http-message-sig's policy; `now` is added per request). */
const POLICY = {
  algorithms: ['ed25519'],
  requiredComponents: ['@authority'],
  requiredParameters: ['created', 'expires', 'keyid', 'tag'],
  clockSkew: CLOCK_SKEW_S,
} as const;

/** The parts of a request a signature covers. */
export interface SignedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  /** Name/value pairs as received (Node's rawHeaders). */
  rawHeaders: readonly string[];
}

/** Whether a request carries any of the Web Bot Auth fields (then it must verify). */
export function isSigned(headers: Record<string, unknown>): boolean {
  return headers.signature !== undefined || headers['signature-input'] !== undefined || headers['signature-agent'] !== undefined;
}

/** Where single-use nonces are remembered: the store (PostgreSQL: every instance), or memory (SQLite: one process). */
interface NonceLedger {
  claim(nonce: string, expiresAt: Date): Promise<boolean>;
}

export interface VerifierSettings {
  /** BASE_URL: its authority is the one every signature must cover. */
  baseUrl: string;
  store: Store;
  clock: Clock;
  log: Logger;
  directories: AgentDirectories;
}

export class AgentVerifier {
  private readonly origin: string;
  private readonly nonces: NonceLedger;
  private readonly agentFields = new Map<string, SignatureAgents>();

  constructor(private readonly settings: VerifierSettings) {
    this.origin = new URL(settings.baseUrl).origin;
    this.nonces = settings.store.dialect === 'postgres' ? storeLedger(settings) : memoryLedger(settings.clock);
  }

  /** The verified agent of a signed request, or 400 invalid_signature naming why. */
  async verify(request: SignedRequest): Promise<VerifiedAgent> {
    const { rawHeaders } = request;
    let input: string | undefined;
    let signature: string | undefined;
    let agentField: string | undefined;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const value = rawHeaders[i + 1] as string;
      if (value.length > MAX_FIELD_CHARS) throw invalidSignature(`the ${rawHeaders[i]} field is over ${MAX_FIELD_CHARS} characters`);
      const name = (rawHeaders[i] as string).toLowerCase();
      if (name === 'signature-input') input = joined(input, value);
      else if (name === 'signature') signature = joined(signature, value);
      else if (name === 'signature-agent') agentField = joined(agentField, value);
    }
    if (input === undefined || signature === undefined) throw invalidSignature('Signature and Signature-Input are both required');
    if (agentField === undefined) throw invalidSignature('the Signature-Agent field (the key directory) is missing');
    const agents = this.signatureAgents(agentField);
    // The library copies and checks every field it is given: only those a signature may cover go
    // in (a covered field is named as a quoted string in Signature-Input; a few more do no harm).
    const fields: { name: string; value: string }[] = [];
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = (rawHeaders[i] as string).toLowerCase();
      if (name === 'signature' || name === 'signature-input' || input.includes(`"${name}"`)) fields.push({ name, value: rawHeaders[i + 1] as string });
    }
    const message = { kind: 'request' as const, method: request.method, targetUri: `${this.origin}${request.url}`, fields };
    const now = Math.floor(this.settings.clock.now().getTime() / 1000);
    const checked: Checked[] = [];
    try {
      // One signature, the common case: the library finds its label, and Signature-Input is parsed once.
      checked.push(await this.verifyOne(message, undefined, agents, now));
    } catch (error) {
      if (!(isSignatureError(error) && error.code === SignatureErrorCode.LabelRequired)) throw reasonOf(error);
      // More than one (or none): each must verify, and all must name the same key.
      const labels = [...parsed(() => parseDictionary(input), 'Signature-Input').keys()];
      if (labels.length === 0) throw invalidSignature('Signature-Input names no signature');
      if (labels.length > MAX_SIGNATURES) throw invalidSignature(`more than ${MAX_SIGNATURES} signatures`);
      for (const label of labels) {
        try {
          checked.push(await this.verifyOne(message, label, agents, now));
        } catch (failure) {
          throw reasonOf(failure);
        }
      }
    }
    const [first] = checked as [Checked, ...Checked[]];
    for (const other of checked) {
      if (other.agent.keyId !== first.agent.keyId || other.agent.directory !== first.agent.directory)
        throw invalidSignature('the signatures name different keys');
    }
    for (const { agent, nonce, expires } of checked) {
      if (nonce === undefined) continue;
      const hash = createHash('sha256').update(`${agent.keyId}\n${nonce}`).digest('base64url');
      if (!(await this.nonces.claim(hash, new Date((expires + CLOCK_SKEW_S) * 1000)))) throw invalidSignature('the nonce was already used (a replay)');
    }
    return first.agent;
  }

  /** One signature (`label`, or the only one), verified with http-message-sig. */
  private async verifyOne(message: Parameters<typeof verifySignature>[0], label: string | undefined, agents: SignatureAgents, now: number): Promise<Checked> {
    let directory = '';
    const verified = await verifySignature(message, {
      ...(label === undefined ? {} : { label }),
      policy: { ...POLICY, now },
      resolveVerifier: async (candidate) => {
        const url = this.directoryOf(candidate, agents);
        directory = url.host;
        const key = await this.settings.directories.keyFor(url, String(candidate.parameters.keyid));
        // node:crypto's one-shot Ed25519 verify: WebCrypto's runs on the thread pool, 3× slower a request.
        return { algorithm: 'ed25519', verify: (data: Uint8Array, signature: Uint8Array) => verifyBytes(null, data, key, signature) };
      },
    });
    const nonce = verified.parameters.nonce;
    return {
      agent: { keyId: String(verified.parameters.keyid), directory },
      nonce: nonce === undefined ? undefined : String(nonce),
      expires: Number(verified.parameters.expires),
    };
  }

  /**
   * `Signature-Agent` parsed, and the directory URL of each value worked out, remembered per
   * field value: an agent sends the same one with every request.
   */
  private signatureAgents(value: string): SignatureAgents {
    let agents = this.agentFields.get(value);
    if (agents === undefined) {
      agents = signatureAgents(value);
      if (this.agentFields.size >= MAX_AGENT_FIELDS) this.agentFields.delete(this.agentFields.keys().next().value as string);
      this.agentFields.set(value, agents);
    }
    return agents;
  }

  /** Checks the candidate's parameters that need no key, then the directory it names. */
  private directoryOf(candidate: UntrustedSignatureCandidate, agents: SignatureAgents): URL {
    const { tag, created, expires, keyid } = candidate.parameters;
    if (tag !== TAG) throw invalidSignature(`the tag must be "${TAG}"`);
    if (typeof keyid !== 'string' || keyid === '') throw invalidSignature('keyid must be a string');
    if (typeof created !== 'number' || typeof expires !== 'number' || !Number.isInteger(created) || !Number.isInteger(expires)) {
      throw invalidSignature('created and expires must be integers');
    }
    if (expires <= created) throw invalidSignature('expires must come after created');
    if (expires - created > MAX_WINDOW_S) throw invalidSignature(`the window from created to expires is over ${MAX_WINDOW_S} s`);
    const covered = candidate.components.find((c) => c.name === 'signature-agent');
    if (covered === undefined) throw invalidSignature('the signature-agent component is not covered');
    const member = covered.parameters.key;
    let url: URL | null | undefined;
    if (member === undefined) url = agents.single;
    else if (typeof member === 'string') url = agents.members.get(member);
    if (url === undefined) throw invalidSignature('Signature-Agent does not name the directory the signature covers');
    if (url === null) throw invalidSignature('Signature-Agent is not an http(s) URL');
    return url;
  }
}

/** One verified signature: whose key, and its nonce to claim. */
interface Checked {
  agent: VerifiedAgent;
  nonce: string | undefined;
  expires: number;
}

/** The directories a `Signature-Agent` field names: each value's URL, or null when it is not an http(s) URL. */
interface SignatureAgents {
  /** The String form's (web-bot-auth 0.1.x), or the Dictionary's one member. */
  single: URL | null | undefined;
  members: Map<string, URL | null>;
}

function joined(before: string | undefined, value: string): string {
  return before === undefined ? value : `${before}, ${value}`;
}

/** `Signature-Agent` as a String (or Token) item, or as a Dictionary of them (the current draft). */
function signatureAgents(value: string): SignatureAgents {
  const text = (item: unknown): string | undefined => (typeof item === 'string' ? item : item instanceof Token ? item.toString() : undefined);
  try {
    const [bare] = parseItem(value);
    const single = text(bare);
    if (single === undefined) throw invalidSignature('Signature-Agent must be a string or a dictionary of strings');
    return { single: directoryUrlOf(single), members: new Map() };
  } catch (error) {
    if (error instanceof AppError) throw error;
  }
  const dictionary: Dictionary = parsed(() => parseDictionary(value), 'Signature-Agent');
  const members = new Map<string, URL | null>();
  for (const [name, member] of dictionary) {
    const url = Array.isArray(member[0]) ? undefined : text(member[0]);
    if (url !== undefined) members.set(name, directoryUrlOf(url));
  }
  return { single: members.size === 1 ? [...members.values()][0] : undefined, members };
}

function parsed<T>(parse: () => T, name: string): T {
  try {
    return parse();
  } catch {
    throw invalidSignature(`${name} is not a valid structured field`);
  }
}

/** The contract's refusal for whatever went wrong, naming it (never internals). */
function reasonOf(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isSignatureError(error)) {
    if (error.cause instanceof AppError) return error.cause;
    return invalidSignature(error.message.replace(/\.$/, ''));
  }
  return invalidSignature('the signature could not be verified');
}

function storeLedger(settings: VerifierSettings): NonceLedger {
  let lastSweep = 0;
  return {
    async claim(nonce, expiresAt) {
      const now = settings.clock.now();
      if (now.getTime() - lastSweep > 60_000) {
        lastSweep = now.getTime();
        deleteExpiredNonces(settings.store.db, now.toISOString(), 1000).catch((error: unknown) => settings.log.warn({ err: error }, 'could not sweep nonces'));
      }
      return claimNonce(settings.store.db, nonce, expiresAt.toISOString());
    },
  };
}

/**
 * SQLite serves one process: its nonces stay in memory (a write per signed request would cost a
 * commit). A restart forgets them: a signature seen before it could be replayed once within its
 * window (at most 5 minutes).
 */
function memoryLedger(clock: Clock): NonceLedger {
  const MAX = 200_000;
  const seen = new Map<string, number>();
  return {
    async claim(nonce, expiresAt) {
      const now = clock.now().getTime();
      const until = seen.get(nonce);
      if (until !== undefined && until >= now) return false;
      if (seen.size >= MAX) {
        for (const [key, end] of seen) if (end < now) seen.delete(key);
        if (seen.size >= MAX) seen.delete(seen.keys().next().value as string);
      }
      seen.set(nonce, expiresAt.getTime());
      return true;
    },
  };
}
