import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { component, createSignature, webcrypto } from 'http-message-sig';
import { afterAll, beforeAll } from 'vitest';
import { generateNonce, helpers, jwkToKeyID, signatureHeaders as wbaSignatureHeaders } from 'web-bot-auth';
import { Ed25519Signer } from 'web-bot-auth/crypto';
import type { Clock } from '../../src/domain/time.js';
import { type TestApp, useTestApp } from './app.js';

/**
 * Agents that sign their requests with Cloudflare's `web-bot-auth` package (a peer implementation
 * of the drafts), and the key directories they publish, served over real HTTP on loopback (test
 * apps run with WEBHOOK_ALLOW_PRIVATE=true, so the SSRF guard lets the fetch through).
 */

export interface TestAgent {
  keyId: string;
  publicJwk: JsonWebKey;
  signer: Ed25519Signer;
  privateKey: CryptoKey;
}

export async function newAgent(): Promise<TestAgent> {
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const privateJwk = await crypto.subtle.exportKey('jwk', pair.privateKey);
  const publicJwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const signer = await Ed25519Signer.fromJWK(privateJwk);
  const keyId = await jwkToKeyID({ kty: 'OKP', crv: 'Ed25519', x: publicJwk.x as string }, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE);
  return { keyId, publicJwk: { kty: 'OKP', crv: 'Ed25519', x: publicJwk.x as string }, signer, privateKey: pair.privateKey };
}

/** A directory server: answers every path with `respond` (the JWKS of `agents` by default) and counts requests. */
export interface DirectoryServer {
  url: string;
  /** host:port */
  host: string;
  requests: string[];
  agents: TestAgent[];
  respond: (request: IncomingMessage, response: ServerResponse) => void;
  close(): Promise<void>;
}

export async function startDirectory(agents: TestAgent[] = []): Promise<DirectoryServer> {
  const directory: DirectoryServer = {
    url: '',
    host: '',
    requests: [],
    agents,
    respond: (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/http-message-signatures-directory+json', 'cache-control': 'max-age=3600' });
      response.end(JSON.stringify({ keys: directory.agents.map((a) => a.publicJwk) }));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    directory.requests.push(request.url ?? '');
    directory.respond(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  directory.host = `127.0.0.1:${port}`;
  directory.url = `http://${directory.host}`;
  return directory;
}

/**
 * Two signatures in one request: Signature-Input and Signature of both, one after the other (their
 * labels must differ), and `first`'s Signature-Agent (both must carry the same field).
 */
export function bothSignatures(first: SignedFields, second: SignedFields): SignedFields {
  return {
    'signature-agent': first['signature-agent'],
    'signature-input': `${first['signature-input']}, ${second['signature-input']}`,
    signature: `${first.signature}, ${second.signature}`,
  };
}

/** The three Web Bot Auth fields of a signed request. */
export interface SignedFields {
  [name: string]: string;
  'signature-agent': string;
  signature: string;
  'signature-input': string;
}

export interface SignOptions {
  /** What Signature-Agent says (default: the directory's origin, String form). */
  signatureAgent?: string;
  /**
   * Dictionary form: Signature-Agent `sig1="<url>"`, covered as "signature-agent";key="sig1".
   * Signed with http-message-sig 0.3: web-bot-auth 0.1.3's own http-message-sig (0.2) ignores the
   * `key` parameter and signs the whole field, against RFC 9421 §2.1.2.
   */
  dictionary?: boolean;
  /** Dictionary form: the member the signature covers (`;key=`, default sig1). */
  member?: string;
  /** Dictionary form: the whole Signature-Agent field (default `<member>="<url>"`). */
  agentField?: string;
  /** Dictionary form: the signature's label (default sig1). */
  label?: string;
  created?: Date;
  expires?: Date;
  nonce?: string;
  /** The authority signed (default: the app's BASE_URL). */
  signedBase?: string;
}

/**
 * The headers an agent sends for `method path` to an app whose BASE_URL is `base`: Signature-Agent,
 * Signature-Input and Signature, made by web-bot-auth's own signatureHeaders.
 */
export async function signedHeaders(
  agent: TestAgent,
  directoryUrl: string,
  base: string,
  method: string,
  path: string,
  now: Date,
  options: SignOptions = {},
): Promise<SignedFields> {
  const headers = new Headers();
  const value = options.signatureAgent ?? directoryUrl;
  const member = options.member ?? 'sig1';
  headers.set('signature-agent', options.dictionary ? (options.agentField ?? `${member}="${value}"`) : `"${value}"`);
  const created = options.created ?? now;
  const expires = options.expires ?? new Date(created.getTime() + 60_000);
  const url = `${options.signedBase ?? base}${path}`;
  if (options.dictionary) {
    const fields = await createSignature(
      { kind: 'request', method, targetUri: url, fields: [{ name: 'signature-agent', value: headers.get('signature-agent') as string }] },
      {
        label: options.label ?? 'sig1',
        components: ['@authority', component('signature-agent', { key: member })],
        parameters: {
          created: Math.floor(created.getTime() / 1000),
          expires: Math.floor(expires.getTime() / 1000),
          keyid: agent.keyId,
          alg: 'ed25519',
          nonce: options.nonce ?? generateNonce(),
          tag: 'web-bot-auth',
        },
        signer: webcrypto.signer(agent.privateKey),
      },
    );
    return { 'signature-agent': headers.get('signature-agent') as string, signature: fields.signature, 'signature-input': fields.signatureInput };
  }
  const signed = await wbaSignatureHeaders({ method, url, headers }, agent.signer, {
    created,
    expires,
    ...(options.nonce ? { nonce: options.nonce } : {}),
  });
  return { 'signature-agent': headers.get('signature-agent') as string, signature: signed.Signature, 'signature-input': signed['Signature-Input'] };
}

/** The BASE_URL the agents' tests give their apps: the `@authority` their agents sign. */
export const AGENTS_BASE = 'http://localhost:8080';
/** Test app settings for signed requests: that BASE_URL, and directories on loopback let through the SSRF guard. */
export const AGENTS_ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', BASE_URL: AGENTS_BASE };

/** Agents made before a file's tests, with their directory served for the file's duration (useAgents). */
export interface AgentsFixture {
  /**
   * The agents: the first `listed` in the directory, the others (strangers) not. The objects
   * exist at once (so a file can name them where it calls useAgents) and are filled in its beforeAll.
   */
  readonly agents: TestAgent[];
  readonly directory: DirectoryServer;
  /** `agent`'s Web Bot Auth fields for `method path` to the app at AGENTS_BASE, its directory this one. */
  sign(agent: TestAgent, method: string, path: string, now: Date, options?: SignOptions): Promise<SignedFields>;
}

/**
 * `listed` agents in one directory, and `strangers` more that it does not list, made in a
 * beforeAll (registered where this is called: before the file's own) and the directory closed
 * after the file.
 */
export function useAgents(listed: number, strangers = 0): AgentsFixture {
  const fixture = {
    agents: Array.from({ length: listed + strangers }, () => ({}) as TestAgent),
    directory: undefined as unknown as DirectoryServer,
    sign: (agent: TestAgent, method: string, path: string, now: Date, options: SignOptions = {}) =>
      signedHeaders(agent, fixture.directory.url, AGENTS_BASE, method, path, now, options),
  };
  beforeAll(async () => {
    for (const agent of fixture.agents) Object.assign(agent, await newAgent());
    fixture.directory = await startDirectory(fixture.agents.slice(0, listed));
  });
  afterAll(async () => fixture.directory?.close());
  return fixture;
}

/**
 * What the files about a verified agent's counts share: an app with the production limits behind
 * one trusted proxy hop (X-Forwarded-For names the address), and two agents in one directory.
 */
export function useCountedAgents(store: 'sqlite' | 'postgres', clock: Clock): { t: TestApp; keys: AgentsFixture; alice: TestAgent; bob: TestAgent } {
  const t = useTestApp({ store, clock, limits: 'production', env: { ...AGENTS_ENV, TRUST_PROXY: '1' } });
  const keys = useAgents(2);
  const [alice, bob] = keys.agents as [TestAgent, TestAgent];
  return { t, keys, alice, bob };
}
