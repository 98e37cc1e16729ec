import type { Kysely } from 'kysely';

/** A checkpoint's RFC 3161 time-stamp (docs/receipt-log.md): the checked TimeStampResp, base64; NULL until the TSA answered. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('log_checkpoints').addColumn('tsr', 'text').execute();
}
