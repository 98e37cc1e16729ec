import { type ApprovalVerdict, type OperatorKeySet, verifyApprovals } from './approvals.js';
import { fromBase64, fromBase64Url, sha256Hex, toBytes, utf8 } from './encoding.js';
import type { Receipt, SignedAttachment } from './types.js';
import { verifyWebBotAuth } from './web-bot-auth.js';

/**
 * Offline verification of receipts and webhooks against a JWKS (/.well-known/jwks.json), on
 * WebCrypto only (Ed25519), so the package has no dependency and installs offline from its
 * tarball. A verdict lists every check and names the first that failed, with the same names as
 * docs/receipt-test-vectors.json, rather than throwing: a caller can say what is wrong.
 */

/** A JSON Web Key as the service publishes them (OKP, Ed25519); other members are kept as given. */
export interface JWK {
  kty?: string;
  crv?: string;
  x?: string;
  kid?: string;
  alg?: string;
  use?: string;
  [member: string]: unknown;
}

/** The service's /.well-known/jwks.json. */
export interface JSONWebKeySet {
  keys: JWK[];
}

export type ReceiptFailure = 'format' | 'kid' | 'signature' | 'issuer' | 'task_id' | 'deliverable' | 'attachments' | 'approvals';

export interface Check<N extends string> {
  name: N;
  ok: boolean;
  detail: string;
}

export interface ReceiptVerdict {
  valid: boolean;
  /** The first check that failed; null when valid. */
  failure: ReceiptFailure | null;
  kid: string | null;
  payload: Receipt | null;
  checks: Check<ReceiptFailure | 'payload'>[];
  /** Each approval of a version-3 receipt, checked (empty for versions 1 and 2). */
  approvals: ApprovalVerdict[];
}

/** A file received with the deliverable. Files are matched by content; the name is for the report. */
export interface ReceivedFile {
  name: string;
  data: Uint8Array | ArrayBuffer | string;
}

export interface VerifyReceiptOptions {
  jwks: JSONWebKeySet;
  /** The service's base URL, which the receipt's `iss` must name. Strongly recommended. */
  issuer?: string;
  /** The task the receipt must be for (`sub` and `task_id`). */
  taskId?: string;
  /** The deliverable as received (operator_notes): its SHA-256 must be the signed deliverable_sha256. */
  operatorNotes?: string;
  /** Files received: every attachment a version-2 receipt signs must be among them (same size and SHA-256), and each must be signed. */
  files?: ReceivedFile[];
  /**
   * The service's /.well-known/operator-keys.json: each passkey attestation of a version-3 receipt
   * is checked against it. Without it, attested approvals fail (an approval without a passkey never needs it).
   */
  operatorKeys?: OperatorKeySet;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const HEX64 = /^[0-9a-f]{64}$/;

export async function verifyReceipt(receipt: string, options: VerifyReceiptOptions): Promise<ReceiptVerdict> {
  const checks: ReceiptVerdict['checks'] = [];
  let approvals: ApprovalVerdict[] = [];
  const done = (kid: string | null, payload: Receipt | null): ReceiptVerdict => {
    const failed = checks.find((c) => !c.ok);
    return { valid: failed === undefined, failure: failed ? (failed.name === 'payload' ? 'format' : failed.name) : null, kid, payload, checks, approvals };
  };

  const token = receipt.trim();
  let kid: string;
  try {
    if (!COMPACT_JWS.test(token)) throw new Error('not a compact JWS (three base64url parts)');
    const header = protectedHeader(token);
    if (header.crit !== undefined) throw new Error('the header has crit extensions this verifier does not know');
    if (header.alg !== 'EdDSA') throw new Error(`alg is ${String(header.alg)}, expected EdDSA`);
    if (typeof header.kid !== 'string' || header.kid === '') throw new Error('the header names no kid');
    kid = header.kid;
    checks.push({ name: 'format', ok: true, detail: 'compact JWS, alg EdDSA' });
  } catch (error) {
    checks.push({ name: 'format', ok: false, detail: messageOf(error) });
    return done(null, null);
  }

  const published = (options.jwks.keys ?? []).some((k) => k.kid === kid);
  checks.push({ name: 'kid', ok: published, detail: published ? `key ${kid} is published` : `key ${kid} is not in the JWKS` });
  if (!published) return done(kid, null);

  let payload: Receipt;
  try {
    payload = JSON.parse(new TextDecoder().decode(await verifiedPayload(token, kid, options.jwks))) as Receipt;
    checks.push({ name: 'signature', ok: true, detail: `signature valid (Ed25519, key ${kid})` });
  } catch (error) {
    checks.push({ name: 'signature', ok: false, detail: `signature invalid: ${messageOf(error)}` });
    return done(kid, null);
  }

  const problems = payloadProblems(payload);
  checks.push({
    name: 'payload',
    ok: problems.length === 0,
    detail: problems.length === 0 ? `receipt_version ${payload.receipt_version}` : problems.join('; '),
  });
  if (problems.length > 0) return done(kid, payload);

  if (options.issuer !== undefined) {
    const expected = options.issuer.replace(/\/+$/, '');
    const ok = sameIssuer(payload.iss, expected);
    checks.push({ name: 'issuer', ok, detail: ok ? `issued by ${expected}` : `issued by ${String(payload.iss)}, not ${expected}` });
  }
  if (options.taskId !== undefined) {
    const ok = payload.task_id === options.taskId && payload.sub === options.taskId;
    checks.push({ name: 'task_id', ok, detail: ok ? `for ${options.taskId}` : `for ${String(payload.task_id)}, not ${options.taskId}` });
  }
  if (options.operatorNotes !== undefined) {
    const actual = await sha256Hex(utf8(options.operatorNotes));
    const ok = actual === payload.deliverable_sha256;
    checks.push({
      name: 'deliverable',
      ok,
      detail: ok ? `deliverable sha256 ${actual}` : `deliverable sha256 is ${actual}, the receipt signed ${payload.deliverable_sha256}`,
    });
  }
  const version: number = payload.receipt_version;
  if (options.files !== undefined) checks.push(await attachmentCheck(version >= 2 ? (payload.attachments ?? []) : [], options.files));
  if (version === 3) {
    const checked = await verifyApprovals(payload, options.operatorKeys);
    approvals = checked.approvals;
    checks.push({ name: 'approvals', ok: checked.ok, detail: checked.detail });
  }
  return done(kid, payload);
}

function payloadProblems(payload: Receipt): string[] {
  const problems: string[] = [];
  const version: unknown = payload.receipt_version;
  if (version !== 1 && version !== 2 && version !== 3) problems.push(`unknown receipt_version ${String(version)}`);
  const approvals: unknown = (payload as { approvals?: unknown }).approvals;
  if (version === 3 && !(Array.isArray(approvals) && approvals.length > 0)) problems.push('approvals is not a non-empty list');
  if ((version === 2 || version === 3) && !(Array.isArray(payload.attachments) && payload.attachments.every(wellFormed)))
    problems.push('attachments is not a list of {name, media_type, size, sha256}');
  if (typeof payload.task_id !== 'string' || payload.sub !== payload.task_id) problems.push('sub and task_id differ');
  if (typeof payload.deliverable_sha256 !== 'string' || !HEX64.test(payload.deliverable_sha256))
    problems.push('deliverable_sha256 is not a SHA-256 hex digest');
  return problems;
}

function wellFormed(a: unknown): boolean {
  if (typeof a !== 'object' || a === null) return false;
  const f = a as Record<string, unknown>;
  return typeof f.name === 'string' && typeof f.media_type === 'string' && Number.isSafeInteger(f.size) && typeof f.sha256 === 'string' && HEX64.test(f.sha256);
}

/** Every signed file present (by SHA-256 and size), and no received file the receipt does not sign. */
async function attachmentCheck(signed: SignedAttachment[], files: ReceivedFile[]): Promise<Check<'attachments'>> {
  const received = await Promise.all(
    files.map(async (f) => {
      const bytes = toBytes(f.data);
      return { name: f.name, size: bytes.length, sha256: await sha256Hex(bytes) };
    }),
  );
  const problems: string[] = [];
  for (const file of signed) {
    if (!received.some((r) => r.sha256 === file.sha256 && r.size === file.size)) problems.push(`${file.name} (sha256 ${file.sha256}) is missing or altered`);
  }
  for (const file of received) {
    if (!signed.some((s) => s.sha256 === file.sha256)) problems.push(`${file.name} (sha256 ${file.sha256}) is not covered by the receipt`);
  }
  if (problems.length > 0) return { name: 'attachments', ok: false, detail: problems.join('; ') };
  return {
    name: 'attachments',
    ok: true,
    detail: signed.length === 0 ? 'the receipt signs no files, and none were given' : `all ${signed.length} file(s) match their signed sha256`,
  };
}

export type WebhookFailure = 'format' | 'timestamp' | 'signature' | 'web_bot_auth';

export interface WebhookVerdict {
  valid: boolean;
  failure: WebhookFailure | null;
  /** The kid of the key whose signature verified. */
  kid: string | null;
  detail: string;
  /** The parsed body ({type, timestamp, data}) once valid. */
  event: { type: string; timestamp: string; data: unknown } | null;
  /** Whether the request's Web Bot Auth signature (Signature-Input) was checked too; it must verify when present. */
  webBotAuth?: boolean;
}

export interface VerifyWebhookOptions {
  jwks: JSONWebKeySet;
  /** Unix seconds to compare webhook-timestamp with (default: now). */
  now?: number;
  /** Largest accepted distance between webhook-timestamp and now (default 300 s, as Standard Webhooks suggests). */
  toleranceSeconds?: number;
  /** The authority the webhook was sent to, which its Web Bot Auth signature covers (default: its Host header). */
  authority?: string;
  /** When given, the Web Bot Auth Signature-Agent must name this origin (the service's BASE_URL). */
  signerOrigin?: string;
  /** Refuse a webhook without a Web Bot Auth signature (default false: services before it sent none). */
  requireWebBotAuth?: boolean;
}

/** Request headers as a plain object, a Headers, or anything with get(). */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Standard Webhooks, asymmetric scheme: `webhook-signature` holds space-separated
 * `v1a,<base64 Ed25519 signature>` entries over "<webhook-id>.<webhook-timestamp>.<raw body>";
 * any published key may have signed. Pass the raw body exactly as received (not re-serialized).
 */
export async function verifyWebhook(request: { headers: HeaderSource; body: string | Uint8Array }, options: VerifyWebhookOptions): Promise<WebhookVerdict> {
  const id = header(request.headers, 'webhook-id');
  const timestamp = header(request.headers, 'webhook-timestamp');
  const signature = header(request.headers, 'webhook-signature');
  const verdict = (failure: WebhookFailure | null, detail: string, kid: string | null = null, event: WebhookVerdict['event'] = null): WebhookVerdict => ({
    valid: failure === null,
    failure,
    kid,
    detail,
    event,
  });
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp))
    return verdict('format', 'webhook-id, webhook-timestamp (Unix seconds) and webhook-signature are required');
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(timestamp)) > tolerance)
    return verdict('timestamp', `webhook-timestamp is ${Math.abs(now - Number(timestamp))} s from now (tolerance ${tolerance} s)`);

  const body = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body);
  const signed = utf8(`${id}.${timestamp}.${body}`);
  const candidates = signature
    .split(' ')
    .filter((part) => part.startsWith('v1a,'))
    .map((part) => fromBase64(part.slice(4)))
    .filter((sig): sig is Uint8Array => sig !== null && sig.length === 64);
  if (candidates.length === 0) return verdict('signature', 'no v1a (Ed25519) signature in webhook-signature');
  for (const jwk of options.jwks.keys ?? []) {
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') continue;
    const key = await importEd25519(jwk);
    if (!key) continue;
    for (const sig of candidates) {
      if (await crypto.subtle.verify({ name: 'Ed25519' }, key, sig as Uint8Array<ArrayBuffer>, signed as Uint8Array<ArrayBuffer>)) {
        let event: WebhookVerdict['event'] = null;
        try {
          event = JSON.parse(body) as WebhookVerdict['event'];
        } catch {
          return verdict('format', 'the signed body is not JSON');
        }
        return webBotAuthVerdict(request.headers, options, now, verdict(null, `signed by key ${String(jwk.kid)}`, jwk.kid ?? null, event));
      }
    }
  }
  return verdict('signature', 'no published key verifies any v1a signature');
}

/**
 * A Standard-Webhooks-valid verdict, after the request's Web Bot Auth signature (docs/verified-agents.md,
 * Outbound) is checked against the same published keys (the service's
 * /.well-known/http-message-signatures-directory serves the keys of its JWKS): a signature present must verify.
 */
async function webBotAuthVerdict(headers: HeaderSource, options: VerifyWebhookOptions, now: number, valid: WebhookVerdict): Promise<WebhookVerdict> {
  const signatureInput = header(headers, 'signature-input');
  if (signatureInput === undefined) {
    if (!options.requireWebBotAuth) return { ...valid, webBotAuth: false };
    return { ...valid, valid: false, failure: 'web_bot_auth', event: null, webBotAuth: false, detail: 'the webhook carries no Web Bot Auth signature' };
  }
  const authority = options.authority ?? header(headers, 'host');
  const wba =
    authority === undefined
      ? { valid: false, detail: 'no authority (Host) to check the Web Bot Auth signature against' }
      : await verifyWebBotAuth(
          { signature: header(headers, 'signature'), signatureInput, signatureAgent: header(headers, 'signature-agent') },
          { jwks: options.jwks, authority, now, ...(options.signerOrigin === undefined ? {} : { signerOrigin: options.signerOrigin }) },
        );
  if (!wba.valid) return { ...valid, valid: false, failure: 'web_bot_auth', event: null, webBotAuth: true, detail: wba.detail };
  return { ...valid, webBotAuth: true, detail: `${valid.detail}; ${wba.detail}` };
}

/** The JWS protected header (the first part), parsed. */
function protectedHeader(token: string): Record<string, unknown> {
  const bytes = fromBase64Url(token.split('.')[0] ?? '');
  const header: unknown = bytes === null ? null : JSON.parse(new TextDecoder().decode(bytes));
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new Error('the protected header is not a JSON object');
  return header as Record<string, unknown>;
}

/** The payload of a compact JWS that a published Ed25519 key named `kid` verifies; throws otherwise. */
async function verifiedPayload(token: string, kid: string, jwks: JSONWebKeySet): Promise<Uint8Array> {
  const [head, body, signature] = token.split('.') as [string, string, string];
  const sig = fromBase64Url(signature);
  const payload = fromBase64Url(body);
  if (sig === null || payload === null) throw new Error('the payload or signature is not base64url');
  const signed = utf8(`${head}.${body}`);
  for (const jwk of jwks.keys ?? []) {
    if (jwk.kid !== kid || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') continue;
    const key = await importEd25519(jwk);
    if (key && (await crypto.subtle.verify({ name: 'Ed25519' }, key, sig as Uint8Array<ArrayBuffer>, signed as Uint8Array<ArrayBuffer>))) return payload;
  }
  throw new Error('signature verification failed');
}

async function importEd25519(jwk: JWK): Promise<CryptoKey | null> {
  try {
    return await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, { name: 'Ed25519' }, false, ['verify']);
  } catch {
    return null;
  }
}

/**
 * The one issuer rule, shared with the server's CLI and the Python client and pinned by
 * `issuer_cases` in docs/receipt-test-vectors.json: same origin and path — scheme and port equal
 * (default ports filled in), paths equal without trailing slashes, hosts equal ignoring case — and
 * any two loopback hosts (localhost, 127.0.0.0/8, [::1]) count as one host.
 */
export function sameIssuer(iss: unknown, expected: string): boolean {
  if (typeof iss !== 'string') return false;
  const a = parseIssuer(iss);
  const b = parseIssuer(expected);
  if (a === null || b === null) return stripSlashes(iss) === stripSlashes(expected);
  return a.protocol === b.protocol && a.port === b.port && a.path === b.path && (a.host === b.host || (isLoopbackHost(a.host) && isLoopbackHost(b.host)));
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

function parseIssuer(value: string): { protocol: string; host: string; port: string; path: string } | null {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return { protocol: url.protocol, host: url.hostname.toLowerCase(), port: url.port || (DEFAULT_PORTS[url.protocol] ?? ''), path: stripSlashes(url.pathname) };
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function stripSlashes(value: string): string {
  return value.trim().replace(/\/+$/, '');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
