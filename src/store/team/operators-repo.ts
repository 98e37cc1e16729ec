import type { Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { OperatorKeysTable, OperatorPasskeysTable, OperatorsTable } from '../schema.js';

/** Operators and their personal keys (migration 140). Every query of these tables is here. */

export type OperatorRow = Selectable<OperatorsTable>;
export type OperatorKeyRow = Selectable<OperatorKeysTable>;

export async function insertOperator(db: Db, row: OperatorRow): Promise<void> {
  await db.insertInto('operators').values(row).execute();
}

export async function findOperator(db: Db, id: string): Promise<OperatorRow | undefined> {
  return db.selectFrom('operators').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findOperatorByEmail(db: Db, email: string): Promise<OperatorRow | undefined> {
  return db.selectFrom('operators').selectAll().where('email', '=', email).executeTakeFirst();
}

/** Every operator, oldest first: a team, not a history (operators are never deleted, but they are few). */
export async function listOperatorRows(db: Db): Promise<OperatorRow[]> {
  return db.selectFrom('operators').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function updateOperatorRow(
  db: Db,
  id: string,
  changes: Partial<Pick<OperatorRow, 'role' | 'disabled' | 'on_duty' | 'updated_at'>>,
): Promise<void> {
  await db.updateTable('operators').set(changes).where('id', '=', id).execute();
}

/** Enabled operators with the admin role. */
export async function countActiveAdmins(db: Db): Promise<number> {
  const row = await db
    .selectFrom('operators')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('role', '=', 'admin')
    .where('disabled', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertKey(db: Db, row: OperatorKeyRow): Promise<void> {
  await db.insertInto('operator_keys').values(row).execute();
}

export async function listKeyRows(db: Db, operatorId: string): Promise<OperatorKeyRow[]> {
  return db.selectFrom('operator_keys').selectAll().where('operator_id', '=', operatorId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/** Revokes a live key of the operator; false when there is none by that id (or it was revoked already). */
export async function revokeKeyRow(db: Db, operatorId: string, keyId: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('operator_keys')
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('operator_id', '=', operatorId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * The enabled operator a live key belongs to, read on every request (one indexed lookup), so a
 * revocation or a disabled operator stops the key at once on every instance.
 */
export async function operatorOfKey(db: Db, keyHash: string): Promise<(Pick<OperatorRow, 'id' | 'role'> & { key_id: string }) | undefined> {
  return db
    .selectFrom('operator_keys')
    .innerJoin('operators', 'operators.id', 'operator_keys.operator_id')
    .select(['operators.id', 'operators.role', 'operator_keys.id as key_id'])
    .where('operator_keys.key_hash', '=', keyHash)
    .where('operator_keys.revoked_at', 'is', null)
    .where('operators.disabled', '=', 0)
    .executeTakeFirst();
}

/**
 * The operator of a console session opened with a personal key, if the key is still live and the
 * operator enabled: one lookup by primary key on every request, so a revocation ends the session at
 * once on every instance.
 */
export async function operatorOfSessionKey(db: Db, operatorId: string, keyId: string): Promise<Pick<OperatorRow, 'id' | 'role'> | undefined> {
  return db
    .selectFrom('operator_keys')
    .innerJoin('operators', 'operators.id', 'operator_keys.operator_id')
    .select(['operators.id', 'operators.role'])
    .where('operator_keys.id', '=', keyId)
    .where('operator_keys.operator_id', '=', operatorId)
    .where('operator_keys.revoked_at', 'is', null)
    .where('operators.disabled', '=', 0)
    .executeTakeFirst();
}

/** The operator of a console session opened with a passkey, if the passkey is not removed and the operator enabled. */
export async function operatorOfSessionPasskey(db: Db, operatorId: string, credentialId: string): Promise<Pick<OperatorRow, 'id' | 'role'> | undefined> {
  return db
    .selectFrom('operator_passkeys')
    .innerJoin('operators', 'operators.id', 'operator_passkeys.operator_id')
    .select(['operators.id', 'operators.role'])
    .where('operator_passkeys.credential_id', '=', credentialId)
    .where('operator_passkeys.operator_id', '=', operatorId)
    .where('operator_passkeys.removed_at', 'is', null)
    .where('operators.disabled', '=', 0)
    .executeTakeFirst();
}

/** The operator of a console session, if still enabled (read on every request, as keys are). */
export async function enabledOperator(db: Db, id: string): Promise<Pick<OperatorRow, 'id' | 'role'> | undefined> {
  return db.selectFrom('operators').select(['id', 'role']).where('id', '=', id).where('disabled', '=', 0).executeTakeFirst();
}

export async function insertInvite(db: Db, row: { token_hash: string; operator_id: string; created_at: string; expires_at: string }): Promise<void> {
  await db
    .insertInto('operator_invites')
    .values({ ...row, used_at: null })
    .execute();
}

/** The invite of a token hash, whatever its state (the caller tells unused and unexpired apart). */
export async function findInvite(db: Db, tokenHash: string) {
  return db.selectFrom('operator_invites').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Uses an invite once: false when it was used meanwhile, or has expired. */
export async function consumeInvite(db: Db, tokenHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('operator_invites')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export type PasskeyRow = Selectable<OperatorPasskeysTable>;

export async function insertPasskey(db: Db, row: PasskeyRow): Promise<void> {
  await db.insertInto('operator_passkeys').values(row).execute();
}

/** A passkey that may sign in (not removed). */
export async function findPasskey(db: Db, credentialId: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('operator_passkeys').selectAll().where('credential_id', '=', credentialId).where('removed_at', 'is', null).executeTakeFirst();
}

/** A passkey by id, removed or not (what the public key list and the log name). */
export async function passkeyById(db: Db, credentialId: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('operator_passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

/** Every passkey of every operator, removed ones too, oldest first: a team's keys are few. */
export async function allPasskeys(db: Db): Promise<PasskeyRow[]> {
  return db.selectFrom('operator_passkeys').selectAll().orderBy('created_at').orderBy('credential_id').execute();
}

/** Every passkey of the operator, removed ones too (oldest first). */
export async function passkeysOf(db: Db, operatorId: string): Promise<PasskeyRow[]> {
  return db.selectFrom('operator_passkeys').selectAll().where('operator_id', '=', operatorId).orderBy('created_at').orderBy('credential_id').execute();
}

/** Removes a passkey of the operator; false when there is none by that id (or it was removed already). */
export async function removePasskeyRow(db: Db, operatorId: string, credentialId: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('operator_passkeys')
    .set({ removed_at: at })
    .where('credential_id', '=', credentialId)
    .where('operator_id', '=', operatorId)
    .where('removed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function updatePasskeyCounter(db: Db, credentialId: string, counter: number): Promise<void> {
  await db.updateTable('operator_passkeys').set({ counter }).where('credential_id', '=', credentialId).execute();
}

export async function insertChallenge(db: Db, row: { id: string; challenge: string; expires_at: string }): Promise<void> {
  await db.insertInto('webauthn_challenges').values(row).execute();
}

/** Takes a challenge once: it is deleted as it is read, so a ceremony cannot be replayed (on any instance). */
export async function takeChallenge(db: Db, id: string, now: string): Promise<string | undefined> {
  const row = await db.deleteFrom('webauthn_challenges').where('id', '=', id).returning(['challenge', 'expires_at']).executeTakeFirst();
  return row && row.expires_at > now ? row.challenge : undefined;
}

/** Forgets challenges of ceremonies never finished. */
export async function sweepChallenges(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Enabled operators on duty (alert recipients); a team is small, so this is a short list. */
export async function onDutyOperators(db: Db): Promise<Pick<OperatorRow, 'id' | 'email'>[]> {
  return db.selectFrom('operators').select(['id', 'email']).where('on_duty', '=', 1).where('disabled', '=', 0).orderBy('id').execute();
}
