import { createHash } from 'node:crypto';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { type ApprovalVerdict, type OperatorKeySet, verifyApprovals } from './approval-verify.js';
import { sameIssuer } from './issuer.js';
import { deliverableSha256, type ReceiptAttachment, type ReceiptPayload } from './payload.js';

/**
 * Verifies a receipt the way any client can: against a published JWKS, with nothing from the
 * service's internals. Returns a verdict with every check rather than throwing, so a caller (the
 * CLI, a test, an agent) can say exactly what failed.
 */

export interface VerifyOptions {
  /** The issuer's /.well-known/jwks.json, as fetched. */
  jwks: JSONWebKeySet;
  /** The task the receipt is supposed to be for. */
  expectedTaskId?: string;
  /** The deliverable as received (operator_notes, or the e-mailed text); checked against deliverable_sha256. */
  operatorNotes?: string;
  /**
   * Files as received (downloaded or from the mail), checked against the receipt's `attachments`
   * by content: every signed file must be among them, and each of them must be signed.
   */
  files?: ReceivedFile[];
  /** The service the JWKS came from (its BASE_URL): the receipt's `iss` must name it. */
  expectedIssuer?: string;
  /**
   * The issuer's /.well-known/operator-keys.json: each passkey attestation of a version-3 receipt
   * is checked against it (src/receipts/approval-verify.ts). Without it, attested approvals fail.
   */
  operatorKeys?: OperatorKeySet;
}

export interface ReceivedFile {
  /** Where it came from (a file name), for the report only: files are matched by their SHA-256. */
  name: string;
  data: Uint8Array;
}

export interface ReceiptCheck {
  name: 'format' | 'kid' | 'signature' | 'payload' | 'issuer' | 'task_id' | 'deliverable' | 'attachments' | 'approvals';
  ok: boolean;
  detail: string;
}

export interface ReceiptVerification {
  valid: boolean;
  kid: string | null;
  payload: ReceiptPayload | null;
  checks: ReceiptCheck[];
  /** Each approval of a version-3 receipt, checked (empty for versions 1 and 2). */
  approvals: ApprovalVerdict[];
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export async function verifyReceipt(receipt: string, options: VerifyOptions): Promise<ReceiptVerification> {
  const checks: ReceiptCheck[] = [];
  let approvals: ApprovalVerdict[] = [];
  const done = (kid: string | null, payload: ReceiptPayload | null): ReceiptVerification => ({
    valid: checks.every((c) => c.ok),
    kid,
    payload,
    checks,
    approvals,
  });

  const token = receipt.trim();
  let kid: string | null = null;
  try {
    if (!COMPACT_JWS.test(token)) throw new Error('not a compact JWS (three base64url parts)');
    const header = decodeProtectedHeader(token);
    if (header.alg !== 'EdDSA') throw new Error(`alg is ${String(header.alg)}, expected EdDSA`);
    if (header.typ !== undefined && header.typ !== 'JWT') throw new Error(`typ is ${String(header.typ)}, expected JWT`);
    if (typeof header.kid !== 'string' || header.kid === '') throw new Error('the header names no kid');
    kid = header.kid;
    checks.push({ name: 'format', ok: true, detail: 'compact JWS, alg EdDSA' });
  } catch (error) {
    checks.push({ name: 'format', ok: false, detail: message(error) });
    return done(null, null);
  }

  const published = (options.jwks.keys ?? []).some((k) => k.kid === kid);
  checks.push({ name: 'kid', ok: published, detail: published ? `key ${kid} is published` : `key ${kid} is not in the JWKS` });
  if (!published) return done(kid, null);

  let payload: ReceiptPayload;
  try {
    const verified = await compactVerify(token, createLocalJWKSet(options.jwks), { algorithms: ['EdDSA'] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as ReceiptPayload;
    checks.push({ name: 'signature', ok: true, detail: `signature valid (Ed25519, key ${kid})` });
  } catch (error) {
    checks.push({ name: 'signature', ok: false, detail: `signature invalid: ${message(error)}` });
    return done(kid, null);
  }

  const shapeProblems = payloadProblems(payload);
  checks.push({
    name: 'payload',
    ok: shapeProblems.length === 0,
    detail: shapeProblems.length === 0 ? `receipt_version ${payload.receipt_version}, sub = task_id` : shapeProblems.join('; '),
  });

  if (options.expectedIssuer !== undefined) {
    const ok = sameIssuer(payload.iss, options.expectedIssuer);
    checks.push({ name: 'issuer', ok, detail: ok ? `issued by ${payload.iss}` : `issued by ${String(payload.iss)}, not ${options.expectedIssuer}` });
  }
  if (options.expectedTaskId !== undefined) {
    const ok = payload.task_id === options.expectedTaskId;
    checks.push({
      name: 'task_id',
      ok,
      detail: ok ? `receipt is for ${payload.task_id}` : `receipt is for ${String(payload.task_id)}, not ${options.expectedTaskId}`,
    });
  }
  if (options.operatorNotes !== undefined) {
    const actual = deliverableSha256(options.operatorNotes);
    const ok = actual === payload.deliverable_sha256;
    checks.push({
      name: 'deliverable',
      ok,
      detail: ok ? `deliverable matches sha256 ${actual}` : `deliverable sha256 is ${actual}, the receipt signed ${String(payload.deliverable_sha256)}`,
    });
  }
  if (options.files !== undefined) checks.push(filesCheck(payload, options.files));
  if ((payload.receipt_version as number) === 3 && shapeProblems.length === 0) {
    const checked = await verifyApprovals(payload, options.operatorKeys);
    approvals = checked.approvals;
    checks.push({ name: 'approvals', ok: checked.ok, detail: checked.detail });
  }
  return done(kid, payload);
}

/** Every signed file present (by SHA-256 and size), and no received file the receipt does not sign. */
function filesCheck(payload: ReceiptPayload, files: ReceivedFile[]): ReceiptCheck {
  const signed: ReceiptAttachment[] = payload.receipt_version >= 2 && Array.isArray(payload.attachments) ? payload.attachments : [];
  const received = files.map((f) => ({ name: f.name, size: f.data.byteLength, sha256: createHash('sha256').update(f.data).digest('hex') }));
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

function payloadProblems(payload: ReceiptPayload): string[] {
  const problems: string[] = [];
  const version: number = payload.receipt_version;
  if (version !== 1 && version !== 2 && version !== 3) problems.push(`unknown receipt_version ${String(version)}`);
  if (version === 3 && !(Array.isArray(payloadApprovals(payload)) && (payloadApprovals(payload) as unknown[]).length > 0))
    problems.push('approvals is not a non-empty list');
  if (version === 2 || version === 3) {
    const files: unknown = payload.attachments;
    const wellFormed = (a: unknown): boolean => {
      if (typeof a !== 'object' || a === null) return false;
      const f = a as Record<string, unknown>;
      return (
        typeof f.name === 'string' &&
        typeof f.media_type === 'string' &&
        Number.isSafeInteger(f.size) &&
        typeof f.sha256 === 'string' &&
        /^[0-9a-f]{64}$/.test(f.sha256)
      );
    };
    if (!Array.isArray(files) || !files.every(wellFormed)) problems.push('attachments is not a list of {name, media_type, size, sha256}');
  }
  if (typeof payload.task_id !== 'string' || payload.sub !== payload.task_id) problems.push('sub and task_id differ');
  if (typeof payload.deliverable_sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(payload.deliverable_sha256))
    problems.push('deliverable_sha256 is not a SHA-256 hex digest');
  if (typeof payload.request_sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(payload.request_sha256)) problems.push('request_sha256 is not a SHA-256 hex digest');
  if (typeof payload.timeline !== 'object' || payload.timeline === null) problems.push('timeline is missing');
  return problems;
}

/** A version-3 payload's `approvals`, read without trusting the type. */
function payloadApprovals(payload: ReceiptPayload): unknown {
  return (payload as { approvals?: unknown }).approvals;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
