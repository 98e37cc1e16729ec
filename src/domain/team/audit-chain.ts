import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical.js';

/**
 * The audit log as a hash chain (contract "Receipts in a public, append-only log"): each entry's
 * `hash` is the lowercase hex SHA-256 of the previous entry's hash (64 zeros before the first), a
 * line feed, and the RFC 8785 canonical JSON of the entry as the audit API returns it, without
 * `hash`. Pure, shared by the sequencer that chains entries, the migration that chained the old
 * ones and `npm run audit:verify`.
 */

export const AUDIT_CHAIN_START = '0'.repeat(64);

export interface ChainedAuditEntry {
  at: string;
  actor: string;
  action: string;
  task_id: string | null;
  details: Record<string, unknown>;
}

export function auditEntryHash(previous: string, entry: ChainedAuditEntry): string {
  const { at, actor, action, task_id, details } = entry;
  return createHash('sha256')
    .update(`${previous}\n${canonicalJson({ at, actor, action, task_id, details })}`, 'utf8')
    .digest('hex');
}

/** The checkpoint's extension line: `audit <entries> <base64 of the head's 32 bytes>`. */
export function auditExtension(entries: number, head: string): string {
  return `audit ${entries} ${Buffer.from(head, 'hex').toString('base64')}`;
}
