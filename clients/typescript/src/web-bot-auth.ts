import { fromBase64, fromBase64Url, toBase64Url, utf8 } from './encoding.js';
import type { JSONWebKeySet, JWK } from './verify.js';

/**
 * Web Bot Auth (RFC 9421 HTTP Message Signatures as draft-meunier-web-bot-auth-architecture and
 * draft-meunier-webbotauth-httpsig-protocol use them), on WebCrypto alone: the package keeps no
 * dependency. It signs and checks exactly one shape, the one the service verifies and sends:
 *
 *   Signature-Agent: "<directory>"
 *   Signature-Input: sig1=("@authority" "signature-agent");created=…;expires=…;keyid="<RFC 7638 thumbprint>";alg="ed25519";nonce="…";tag="web-bot-auth"
 *   Signature: sig1=:<base64 Ed25519 signature>:
 *
 * over the signature base (RFC 9421 §2.5) of those two components and the parameters. With that
 * shape fixed, the structured-field serialisation is a string template; the checker refuses any
 * other shape rather than parse structured fields in general.
 */

/** An agent's signing identity: its Ed25519 private key, and the directory publishing its public key. */
export interface AgentKey {
  /** The Ed25519 private key as a JWK (kty OKP, crv Ed25519, x and d). */
  key: JWK;
  /** What Signature-Agent names: the agent's origin (its /.well-known/http-message-signatures-directory) or the directory's URL. */
  directory: string;
}

export const WEB_BOT_AUTH_TAG = 'web-bot-auth';
/** The window each signature holds (the service takes at most 300 s). */
const WINDOW_SECONDS = 60;
const COMPONENTS = '("@authority" "signature-agent")';

/** RFC 7638 JWK thumbprint of an Ed25519 key (base64url SHA-256 of its required members): Web Bot Auth's keyid. */
export async function jwkThumbprint(jwk: JWK): Promise<string> {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x });
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(canonical) as Uint8Array<ArrayBuffer>)));
}

/** `host[:port]` of a URL as RFC 9421 §2.2.3 covers it (the default port left out, host lower-cased). */
export function authorityOf(url: string): string {
  return new URL(url).host.toLowerCase();
}

/** A signer for one agent: call it per request (each signature carries a fresh single-use nonce). */
export function webBotAuthSigner(agent: AgentKey): (authority: string, now?: Date) => Promise<Record<string, string>> {
  if (!/^https?:\/\/[\x21-\x7e]+$/.test(agent.directory) || /["\\]/.test(agent.directory)) {
    throw new TypeError('agent.directory must be an http(s) URL (the agent origin or its key directory)');
  }
  const agentField = `"${agent.directory}"`;
  const prepared = (async () => {
    const { kty, crv, x, d } = agent.key;
    if (kty !== 'OKP' || crv !== 'Ed25519' || typeof x !== 'string' || typeof d !== 'string')
      throw new TypeError('agent.key must be an Ed25519 private JWK (kty OKP, crv Ed25519, x, d)');
    const privateKey = await crypto.subtle.importKey('jwk', { kty, crv, x, d }, { name: 'Ed25519' }, false, ['sign']);
    return { privateKey, keyId: await jwkThumbprint(agent.key) };
  })();
  // A key that cannot be imported fails the request that uses it, not the process.
  prepared.catch(() => undefined);
  return async (authority, now = new Date()) => {
    const { privateKey, keyId } = await prepared;
    const created = Math.floor(now.getTime() / 1000);
    const nonce = toBase64(crypto.getRandomValues(new Uint8Array(32)));
    const params = `${COMPONENTS};created=${created};expires=${created + WINDOW_SECONDS};keyid="${keyId}";alg="ed25519";nonce="${nonce}";tag="${WEB_BOT_AUTH_TAG}"`;
    const signature = await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, utf8(signatureBase(authority, agentField, params)) as Uint8Array<ArrayBuffer>);
    return { 'signature-agent': agentField, 'signature-input': `sig1=${params}`, signature: `sig1=:${toBase64(new Uint8Array(signature))}:` };
  };
}

/** RFC 9421 §2.5: one line per covered component, then @signature-params (the Signature-Input member's value). */
function signatureBase(authority: string, signatureAgent: string, params: string): string {
  return `"@authority": ${authority}\n"signature-agent": ${signatureAgent.trim()}\n"@signature-params": ${params}`;
}

export interface WebBotAuthVerdict {
  valid: boolean;
  detail: string;
  /** The keyid (RFC 7638 thumbprint) whose signature verified. */
  keyId: string | null;
}

export interface VerifyWebBotAuthOptions {
  /** The signer's published keys (the service's /.well-known/http-message-signatures-directory, the same keys as its JWKS). */
  jwks: JSONWebKeySet;
  /** The authority the request was sent to (the receiver's host[:port], as in its Host header). */
  authority: string;
  /** Unix seconds (default: now). */
  now?: number;
  /** When given, Signature-Agent must name this origin (the service's BASE_URL). */
  signerOrigin?: string;
}

const INPUT = /^([a-z*][a-z0-9_*.-]*)=(\("@authority" "signature-agent"\)((?:;[a-z*][a-z0-9_*.-]*=(?:"[\x20-\x21\x23-\x5b\x5d-\x7e]*"|-?\d{1,15}))*))$/;
const PARAM = /;([a-z*][a-z0-9_*.-]*)=("[^"]*"|-?\d+)/g;
const CLOCK_SKEW_SECONDS = 30;

/**
 * Checks a request's Web Bot Auth signature (the shape above) against published Ed25519 keys,
 * offline: tag web-bot-auth, alg ed25519 when named, created/expires holding `now` (±30 s) at most
 * 300 s apart, keyid the thumbprint of a published key, and the Ed25519 signature over the base.
 */
export async function verifyWebBotAuth(
  headers: { signature?: string | undefined; signatureInput?: string | undefined; signatureAgent?: string | undefined },
  options: VerifyWebBotAuthOptions,
): Promise<WebBotAuthVerdict> {
  const refuse = (detail: string): WebBotAuthVerdict => ({ valid: false, detail, keyId: null });
  const { signature, signatureInput, signatureAgent } = headers;
  if (!signature || !signatureInput || !signatureAgent) return refuse('Signature, Signature-Input and Signature-Agent are all required');
  const input = INPUT.exec(signatureInput.trim());
  if (!input) return refuse('Signature-Input is not one signature over ("@authority" "signature-agent")');
  const [, label, params, paramList] = input as unknown as [string, string, string, string];
  const values = new Map<string, string | number>();
  for (const [, name, raw] of paramList.matchAll(PARAM)) {
    if (values.has(name as string)) return refuse(`the parameter ${name} appears twice`);
    values.set(name as string, (raw as string).startsWith('"') ? (raw as string).slice(1, -1) : Number(raw));
  }
  const { tag, created, expires, keyid, alg } = Object.fromEntries(values);
  if (tag !== WEB_BOT_AUTH_TAG) return refuse(`the tag is not "${WEB_BOT_AUTH_TAG}"`);
  if (alg !== undefined && alg !== 'ed25519') return refuse(`alg is ${String(alg)}, expected ed25519`);
  if (typeof created !== 'number' || typeof expires !== 'number' || typeof keyid !== 'string') return refuse('created, expires and keyid are required');
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (expires <= created || expires - created > 300) return refuse('the window from created to expires is not 1 to 300 s');
  if (created > now + CLOCK_SKEW_SECONDS) return refuse('created is in the future');
  if (expires < now - CLOCK_SKEW_SECONDS) return refuse('the signature has expired');

  const agent = /^"([\x21\x23-\x5b\x5d-\x7e]*)"$/.exec(signatureAgent.trim())?.[1];
  if (agent === undefined) return refuse('Signature-Agent is not a quoted URL');
  if (options.signerOrigin !== undefined && originOf(agent) !== originOf(options.signerOrigin)) {
    return refuse(`Signature-Agent names ${agent}, not ${options.signerOrigin}`);
  }
  const member = new RegExp(`(?:^|,)\\s*${label.replace(/[.*]/g, '\\$&')}=:([A-Za-z0-9+/=]*):\\s*(?:,|$)`).exec(signature);
  const bytes = member ? fromBase64(member[1] as string) : null;
  if (bytes === null || bytes.length !== 64) return refuse(`Signature has no Ed25519 signature labelled ${label}`);

  const base = utf8(signatureBase(options.authority.toLowerCase(), signatureAgent, params));
  for (const jwk of options.jwks.keys ?? []) {
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || fromBase64Url(jwk.x) === null) continue;
    if ((await jwkThumbprint(jwk)) !== keyid) continue;
    let key: CryptoKey;
    try {
      key = await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, { name: 'Ed25519' }, false, ['verify']);
    } catch {
      continue;
    }
    if (await crypto.subtle.verify({ name: 'Ed25519' }, key, bytes as Uint8Array<ArrayBuffer>, base as Uint8Array<ArrayBuffer>)) {
      return { valid: true, detail: `Web Bot Auth signature by key ${keyid}`, keyId: keyid };
    }
    return refuse(`the Web Bot Auth signature does not verify with key ${keyid} (for authority ${options.authority})`);
  }
  return refuse(`keyid ${keyid} is not a published key`);
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}
