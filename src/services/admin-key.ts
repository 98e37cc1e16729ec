import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import { getOrCreateSetting } from '../store/settings-repo.js';

/**
 * The operator's key. With ADMIN_KEY set, that key; otherwise one is generated on first start,
 * only its SHA-256 is stored (the key is 256 random bits, so a plain hash cannot be guessed back),
 * and it is printed once. Comparison is constant-time.
 */
export async function loadAdminKeyHash(db: Db, configured: string | undefined, log: Logger): Promise<Buffer> {
  if (configured !== undefined) return sha256(configured);
  let generated: string | undefined;
  const stored = await getOrCreateSetting(db, 'admin_key_sha256', () => {
    generated = `hts_admin_${randomBytes(32).toString('base64url')}`;
    return sha256(generated).toString('hex');
  });
  if (generated !== undefined && stored === sha256(generated).toString('hex')) {
    log.warn({ admin_key: generated }, `Generated the operator key (shown only this once; keep it, or set ADMIN_KEY): ${generated}`);
  }
  return Buffer.from(stored, 'hex');
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
