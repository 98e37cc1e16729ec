import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { decodeJwt, type JSONWebKeySet } from 'jose';
import { TASK_ID_PATTERN } from '../domain/ids.js';
import type { OperatorKeySet } from '../receipts/approval-verify.js';
import { type LogCheck, parseCheckpointNote, parseTlogProof, verifyConsistency, verifyLogProof, verifyTimestamp } from '../receipts/log-verify.js';
import { type ReceivedFile, type VerifyOptions, verifyReceipt } from '../receipts/verify.js';

/**
 * `npm run verify-receipt -- <task_id | receipt> [--base-url URL] [--notes-file FILE] [--task-id ID] [--jwks-file FILE] [--files DIR] [--issuer URL] [--proof FILE] [--vkey KEY|FILE] [--tsa-ca FILE] [--checkpoint OLD [--consistency FILE]] [--operator-keys FILE|URL]`
 *
 * What any client can run to check a receipt: it fetches the JWKS from the service, verifies the
 * signature and the key id, and checks the deliverable hash against operator_notes (or a file)
 * and the task id. The service is --base-url, else BASE_URL, else (for a receipt) the receipt's
 * own `iss`, else http://localhost:$PORT. A receipt verified against its own `iss` proves only
 * that `iss` signed it: the verdict names the origin the keys came from. The receipt's `iss` must
 * name --issuer, else that origin, under the one issuer rule (loopback names are one host).
 * With `--files DIR` it also checks the files in DIR (downloaded, or saved from the mail) against
 * the receipt's signed `attachments`: each signed file must be there, and each file there signed.
 * It also checks that the receipt is in the public log (docs/receipt-log.md): its C2SP tlog-proof
 * (--proof FILE, else fetched for a task id) against the log's verifier key (--vkey, the key or a
 * file holding it, else /log/vkey): the checkpoint's signature and the inclusion path. With
 * --jwks-file, --proof and --vkey it runs offline. A receipt not yet in the log is said, not failed.
 * An RFC 3161 token on the proof's extra line is checked (imprint, signature; the chain with
 * --tsa-ca). With --checkpoint OLD (a checkpoint kept earlier) it checks that the log only grew
 * since: the consistency proof from --consistency FILE, else GET /log/consistency?from=<its size>.
 * A receipt_version 3 lists approvals: each passkey attestation is checked offline against the
 * operator keys (--operator-keys, a file or URL, else /.well-known/operator-keys.json): the
 * challenge, the key valid at the approval's time, user presence and the signature
 * (docs/receipt-log.md, "Approvals"). An approval without a passkey is shown as unsigned.
 * Prints a verdict; exits 0 when valid, 1 when not (or when something could not be fetched),
 * 2 on a usage error.
 */

const USAGE =
  'Usage: npm run verify-receipt -- <task_id | receipt> [--base-url URL] [--notes-file FILE] [--task-id ID] [--jwks-file FILE] [--files DIR] [--issuer URL] [--proof FILE] [--vkey KEY|FILE] [--tsa-ca FILE] [--checkpoint OLD [--consistency FILE]] [--operator-keys FILE|URL]\n';

/** The regular files directly in `dir` (what a user downloaded the attachments into). */
function readFiles(dir: string): ReceivedFile[] {
  return readdirSync(dir)
    .filter((name) => statSync(path.join(dir, name)).isFile())
    .sort()
    .map((name) => ({ name, data: readFileSync(path.join(dir, name)) }));
}

interface PublishedTask {
  task_id: string;
  status: string;
  receipt?: string;
  operator_notes: string | null;
}

const out = (line = '') => process.stdout.write(`${line}\n`);

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    // Name the URL: "fetch failed" alone does not tell a newcomer which address was wrong.
    const cause = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    throw new Error(`could not reach ${url} (${cause}). Pass --base-url, or set BASE_URL or PORT.`);
  }
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: res.status, body: text };
  }
}

async function fetchTask(baseUrl: string, taskId: string): Promise<PublishedTask | string> {
  const { status, body } = await getJson(`${baseUrl}/api/v1/tasks/${encodeURIComponent(taskId)}`);
  if (status === 404) return `the service has no task ${taskId}`;
  if (status !== 200 || typeof body !== 'object' || body === null) return `the status endpoint answered ${status}`;
  return body as PublishedTask;
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'base-url': { type: 'string' },
        'notes-file': { type: 'string' },
        'task-id': { type: 'string' },
        'jwks-file': { type: 'string' },
        files: { type: 'string' },
        issuer: { type: 'string' },
        proof: { type: 'string' },
        vkey: { type: 'string' },
        'tsa-ca': { type: 'string' },
        checkpoint: { type: 'string' },
        consistency: { type: 'string' },
        'operator-keys': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    out(USAGE.trimEnd());
    return 0;
  }
  const subject = positionals[0]?.trim();
  if (!subject || positionals.length > 1) {
    process.stderr.write(USAGE);
    return 2;
  }
  const configured = values['base-url'] ?? process.env.BASE_URL;
  const issuer = TASK_ID_PATTERN.test(subject) ? undefined : issuerOf(subject);
  const baseUrl = (configured ?? issuer ?? `http://localhost:${process.env.PORT ?? '8080'}`).replace(/\/+$/, '');

  let receipt: string;
  let expectedTaskId = values['task-id'];
  let operatorNotes: string | undefined = values['notes-file'] !== undefined ? readFileSync(values['notes-file'], 'utf8') : undefined;

  if (TASK_ID_PATTERN.test(subject)) {
    expectedTaskId = subject;
    const task = await fetchTask(baseUrl, subject);
    if (typeof task === 'string') return fail(`Cannot verify: ${task} (at ${baseUrl}).`);
    if (!task.receipt) return fail(`Task ${subject} is ${task.status}: it has no receipt yet (receipts are issued on delivery).`);
    receipt = task.receipt;
    operatorNotes ??= task.operator_notes ?? '';
    out(`Task ${subject} from ${baseUrl}`);
  } else {
    receipt = subject;
    let claimed: string | undefined;
    try {
      const sub = decodeJwt(receipt).sub;
      claimed = typeof sub === 'string' ? sub : undefined;
    } catch {
      // Not decodable: verifyReceipt reports the format problem below.
    }
    if (operatorNotes === undefined && claimed !== undefined && TASK_ID_PATTERN.test(claimed)) {
      // Compare against what the service publishes for the task the receipt claims to cover.
      const task = await fetchTask(baseUrl, claimed).catch((error: unknown) => `fetching it failed: ${String(error)}`);
      if (typeof task === 'string') out(`Note: could not fetch task ${claimed} to check the deliverable (${task}).`);
      else operatorNotes = task.operator_notes ?? '';
    }
    out(`Receipt${claimed ? ` claiming task ${claimed}` : ''}, checked against ${baseUrl}`);
  }

  let jwks: JSONWebKeySet;
  if (values['jwks-file'] !== undefined) {
    jwks = JSON.parse(readFileSync(values['jwks-file'], 'utf8')) as JSONWebKeySet;
  } else {
    const { status, body } = await getJson(`${baseUrl}/.well-known/jwks.json`);
    if (status !== 200 || typeof body !== 'object' || body === null || !Array.isArray((body as JSONWebKeySet).keys)) {
      return fail(`Cannot verify: ${baseUrl}/.well-known/jwks.json answered ${status} without a key set.`);
    }
    jwks = body as JSONWebKeySet;
  }

  // The one issuer rule (src/receipts/issuer.ts): the receipt must name the service the keys came
  // from (or --issuer), loopback names being one host — as `htask verify` and the Python client do.
  const expectedIssuer = (values.issuer ?? baseUrl).replace(/\/+$/, '');
  const options: VerifyOptions = { jwks, expectedIssuer };
  if (expectedTaskId !== undefined) options.expectedTaskId = expectedTaskId;
  if (operatorNotes !== undefined) options.operatorNotes = operatorNotes;
  if (values.files !== undefined) {
    try {
      options.files = readFiles(values.files);
    } catch (error) {
      return fail(`Cannot read --files ${values.files}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (receiptVersion(receipt) === 3) {
    const keys = await operatorKeys(baseUrl, values['operator-keys']);
    if (typeof keys === 'string') return fail(`Cannot verify the approvals: ${keys}`);
    options.operatorKeys = keys;
  }
  const result = await verifyReceipt(receipt, options);
  const logChecks = await logProofChecks(baseUrl, receipt, expectedTaskId ?? result.payload?.task_id, values);
  const checks = [...result.checks, ...logChecks];
  for (const check of checks) out(`  ${check.ok ? '✓' : '✗'} ${check.name.padEnd(Math.max(12, check.name.length + 1))}${check.detail}`);
  const p = result.payload;
  if (p) {
    const tl = p.timeline ?? {};
    out(
      `  timeline      submitted ${tl.submitted_at ?? '-'}, seen ${tl.seen_by_operator_at ?? '-'}, accepted ${tl.accepted_at ?? '-'}, delivered ${tl.delivered_at ?? '-'}`,
    );
    out(`  request       sha256 ${String(p.request_sha256)}`);
    for (const file of Array.isArray(p.attachments) ? p.attachments : [])
      out(`  file          ${file.name} (${file.media_type}, ${file.size} bytes) sha256 ${file.sha256}`);
    for (const approval of result.approvals) out(`  approval      ${approval.detail}${approval.at === null ? '' : `, at ${approval.at}`}`);
    if (p.receipt_version >= 2 && values.files === undefined && (p.attachments ?? []).length > 0) {
      out('  (files not checked: download them into a directory and pass --files DIR)');
    }
  }
  if (operatorNotes === undefined) out('  (deliverable not checked: pass --notes-file with the text you received)');
  if (!result.valid || logChecks.some((c) => !c.ok)) return fail('INVALID: this receipt does not verify.');
  out(`VALID: signed by ${baseUrl} (key ${result.kid ?? '?'}) for ${p?.task_id ?? '?'}, delivered ${p?.timeline.delivered_at ?? '?'}.`);
  return 0;
}

/**
 * The public log's checks: the proof from --proof or the service, the key from --vkey (a key or a
 * file) or /log/vkey. A receipt the service has not logged yet (404) is reported, not failed.
 */
async function logProofChecks(
  baseUrl: string,
  receipt: string,
  taskId: string | undefined,
  args: { proof?: string; vkey?: string; 'tsa-ca'?: string; checkpoint?: string; consistency?: string },
): Promise<LogCheck[]> {
  const proofFile = args.proof;
  const vkeyArg = args.vkey;
  let proof: string;
  if (proofFile !== undefined) {
    proof = readFileSync(proofFile, 'utf8');
  } else {
    if (taskId === undefined) return [];
    const res = await fetch(`${baseUrl}/api/v1/tasks/${encodeURIComponent(taskId)}/receipt-proof`, { signal: AbortSignal.timeout(15_000) }).catch(
      () => undefined,
    );
    if (!res || res.status !== 200) {
      out(
        `  (public log not checked: ${res ? `the proof answered ${res.status}; a receipt is logged within seconds of delivery` : 'the proof could not be fetched'})`,
      );
      return [];
    }
    proof = await res.text();
  }
  let vkey = vkeyArg;
  if (vkey !== undefined && !vkey.includes('+')) vkey = readFileSync(vkey, 'utf8');
  if (vkey === undefined) {
    const res = await fetch(`${baseUrl}/log/vkey`, { signal: AbortSignal.timeout(15_000) }).catch(() => undefined);
    if (!res || res.status !== 200) return [{ name: 'log_checkpoint', ok: false, detail: `could not fetch ${baseUrl}/log/vkey: pass --vkey` }];
    vkey = await res.text();
  }
  const checks = verifyLogProof(receipt, proof, vkey.trim());
  let parsed: ReturnType<typeof parseTlogProof> | undefined;
  try {
    parsed = parseTlogProof(proof);
  } catch {
    return checks; // log_proof already says why
  }
  if (parsed.extra !== null) {
    checks.push(await verifyTimestamp(parsed.extra, parsed.checkpoint, args['tsa-ca'] === undefined ? undefined : readFileSync(args['tsa-ca'], 'utf8')));
  }
  if (args.checkpoint !== undefined) {
    const oldNote = readFileSync(args.checkpoint, 'utf8');
    let consistency: string;
    if (args.consistency !== undefined) {
      consistency = readFileSync(args.consistency, 'utf8');
    } else {
      let from = '0';
      try {
        from = String(parseCheckpointNote(oldNote).size);
      } catch {
        // verifyConsistency names it.
      }
      const res = await fetch(`${baseUrl}/log/consistency?from=${from}`, { signal: AbortSignal.timeout(15_000) }).catch(() => undefined);
      if (!res || (res.status !== 200 && res.status !== 404)) {
        checks.push({ name: 'log_consistency', ok: false, detail: `could not fetch ${baseUrl}/log/consistency: pass --consistency` });
        return checks;
      }
      if (res.status === 404) {
        checks.push({
          name: 'log_consistency',
          ok: false,
          detail: `the log is now smaller than the older checkpoint (${from} leaves): it was rolled back or forked`,
        });
        return checks;
      }
      consistency = await res.text();
    }
    checks.push(verifyConsistency(oldNote, consistency, vkey.trim()));
  }
  return checks;
}

/** The receipt's receipt_version, read before verifying (to know whether the operator keys are needed). */
function receiptVersion(receipt: string): unknown {
  try {
    return decodeJwt(receipt).receipt_version;
  } catch {
    return undefined;
  }
}

/** The operator keys from a file or URL (--operator-keys), else the service's /.well-known/operator-keys.json; a string says why not. */
async function operatorKeys(baseUrl: string, source: string | undefined): Promise<OperatorKeySet | string> {
  let body: unknown;
  if (source !== undefined && !/^https?:\/\//.test(source)) {
    try {
      body = JSON.parse(readFileSync(source, 'utf8'));
    } catch (error) {
      return `cannot read --operator-keys ${source}: ${error instanceof Error ? error.message : String(error)}`;
    }
  } else {
    const url = source ?? `${baseUrl}/.well-known/operator-keys.json`;
    const res = await getJson(url);
    if (res.status !== 200) return `${url} answered ${res.status}: pass --operator-keys FILE`;
    body = res.body;
  }
  if (typeof body !== 'object' || body === null || !Array.isArray((body as OperatorKeySet).keys)) return 'the operator keys are not {keys: [...]}';
  return body as OperatorKeySet;
}

/** The receipt's `iss` when it is an http(s) origin, so a receipt verifies with no configuration. */
function issuerOf(receipt: string): string | undefined {
  try {
    const iss = decodeJwt(receipt).iss;
    return typeof iss === 'string' && /^https?:\/\/[^\s/]+/.test(iss) ? new URL(iss).origin : undefined;
  } catch {
    return undefined;
  }
}

function fail(line: string): number {
  out(line);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`Verification failed to run: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
