import { decodeJwt, type JSONWebKeySet } from 'jose';
import { AppError } from '../../domain/errors.js';
import { publicKeys } from '../../receipts/keys.js';
import { type ReceiptCheck, type VerifyOptions, verifyReceipt } from '../../receipts/verify.js';
import type { ServiceDeps } from '../context.js';
import { operatorKeys } from '../team/passkeys.js';
import { getTask } from './tasks.js';

/**
 * The status page's receipt check, done by the service for browsers whose WebCrypto lacks
 * Ed25519: the same verification anyone can run (receipts/verify.ts) against the published key
 * set, the task id and the result as the status endpoint returns it; a version-3 receipt's passkey
 * approvals against the published operator keys, as /.well-known/operator-keys.json lists them.
 */
export interface ReceiptCheckResult {
  task_id: string;
  valid: boolean;
  /** When the receipt was signed (its iat), ISO UTC. */
  signed_at: string | null;
  checks: ReceiptCheck[];
  checked_by: 'service';
}

export async function checkTaskReceipt(deps: ServiceDeps, taskId: string): Promise<ReceiptCheckResult> {
  const task = await getTask(deps, taskId);
  if (!task.receipt) throw new AppError('not_found', 'This task has no receipt yet: it is issued on delivery.');
  const jwks = { keys: await publicKeys(deps.store.db) } as unknown as JSONWebKeySet;
  const options: VerifyOptions = { jwks, expectedTaskId: task.task_id, operatorNotes: task.operator_notes ?? '' };
  if (receiptVersion(task.receipt) === 3) options.operatorKeys = { keys: await operatorKeys(deps) };
  const result = await verifyReceipt(task.receipt, options);
  const iat = result.payload?.iat;
  return {
    task_id: task.task_id,
    valid: result.valid && result.payload?.iss === deps.config.baseUrl,
    signed_at: typeof iat === 'number' ? new Date(iat * 1000).toISOString() : null,
    checks: result.checks,
    checked_by: 'service',
  };
}

/** The receipt's version, read before verifying: only a version 3 needs the operator keys. */
function receiptVersion(receipt: string): unknown {
  try {
    return decodeJwt(receipt).receipt_version;
  } catch {
    return undefined;
  }
}
