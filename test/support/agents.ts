import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { component, createSignature, webcrypto } from 'http-message-sig';
import { generateNonce, helpers, jwkToKeyID, signatureHeaders as wbaSignatureHeaders } from 'web-bot-auth';
import { Ed25519Signer } from 'web-bot-auth/crypto';

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
  headers.set('signature-agent', options.dictionary ? `sig1="${value}"` : `"${value}"`);
  const created = options.created ?? now;
  const expires = options.expires ?? new Date(created.getTime() + 60_000);
  const url = `${options.signedBase ?? base}${path}`;
  if (options.dictionary) {
    const fields = await createSignature(
      { kind: 'request', method, targetUri: url, fields: [{ name: 'signature-agent', value: headers.get('signature-agent') as string }] },
      {
        label: 'sig1',
        components: ['@authority', component('signature-agent', { key: 'sig1' })],
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
