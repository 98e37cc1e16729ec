import { randomBytes } from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { sha256Hex } from '../../domain/canonical.js';
import { AppError } from '../../domain/errors.js';
import type { Actor, Role, SignedIn } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import type { OperatorKey } from '../../receipts/approval-verify.js';
import { appendOperatorKeyLeaf, operatorKey, storedPasskeyKeyId } from '../../receipts/operator-keys.js';
import { type Db, withTransaction } from '../../store/db.js';
import {
  allPasskeys,
  consumeInvite,
  findInvite,
  findOperator,
  findPasskey,
  insertChallenge,
  insertPasskey,
  type OperatorRow,
  type PasskeyRow,
  passkeysOf,
  takeChallenge,
  updatePasskeyCounter,
} from '../../store/team/operators-repo.js';
import type { ServiceDeps } from '../context.js';
import { recordAudit } from './audit.js';

/**
 * Passkeys (contract "A team of operators"): an invite link lets its operator register one
 * (WebAuthn, resident key, user verification preferred), and the console signs in with it. The
 * relying party is BASE_URL: its origin and host name are what every response must be bound to.
 * Challenges live in the store and are taken once, so a ceremony started on one instance may end on
 * another and can never be replayed.
 */

const CHALLENGE_MS = 5 * 60_000;

export interface Ceremony<T> {
  challenge_id: string;
  options: T;
}

function relyingParty(deps: ServiceDeps): { rpID: string; origin: string } {
  const url = new URL(deps.config.baseUrl);
  return { rpID: url.hostname, origin: url.origin };
}

const invalidInvite = () =>
  new AppError('not_found', 'This invite link is not valid: it was used already, has expired (after 24 hours), or was mistyped. Ask an admin for a new one.');
const failedCeremony = (why: string) => new AppError('unauthorized', `The passkey could not be verified: ${why}`);

/** A SimpleWebAuthn verification; what it throws (wrong origin, RP ID, challenge, bad data) is a failed ceremony. */
async function verifying<T>(verify: () => Promise<T>): Promise<T> {
  try {
    return await verify();
  } catch (error) {
    throw failedCeremony(error instanceof Error ? error.message.slice(0, 200) : 'unreadable response.');
  }
}

/** COSE algorithms a passkey may use: EdDSA (Ed25519), ES256 (P-256) and RS256, in that order of preference. */
const PUBLISHABLE_PASSKEY_ALGORITHMS = [-8, -7, -257];

/** The operator of a usable invite (unused, unexpired, operator enabled); 404 otherwise. */
export async function invitedOperator(deps: ServiceDeps, token: string): Promise<OperatorRow> {
  const invite = /^[A-Za-z0-9_-]{43}$/.test(token) ? await findInvite(deps.store.db, sha256Hex(token)) : undefined;
  if (!invite || invite.used_at !== null || invite.expires_at <= iso(deps.clock.now())) throw invalidInvite();
  const operator = await findOperator(deps.store.db, invite.operator_id);
  if (!operator || operator.disabled === 1) throw invalidInvite();
  return operator;
}

async function newChallenge(deps: ServiceDeps, challenge: string): Promise<string> {
  const id = randomBytes(18).toString('base64url');
  await insertChallenge(deps.store.db, { id, challenge, expires_at: iso(new Date(deps.clock.now().getTime() + CHALLENGE_MS)) });
  return id;
}

async function challengeOf(deps: ServiceDeps, raw: unknown): Promise<{ challenge: string; response: unknown }> {
  const body = (typeof raw === 'object' && raw !== null ? raw : {}) as { challenge_id?: unknown; response?: unknown };
  const challenge =
    typeof body.challenge_id === 'string' && body.challenge_id.length <= 100
      ? await takeChallenge(deps.store.db, body.challenge_id, iso(deps.clock.now()))
      : undefined;
  if (!challenge) throw failedCeremony('the challenge is unknown, used or expired. Start again.');
  if (typeof body.response !== 'object' || body.response === null) throw failedCeremony('no response from the authenticator.');
  return { challenge, response: body.response };
}

export async function registrationOptions(deps: ServiceDeps, token: string): Promise<Ceremony<PublicKeyCredentialCreationOptionsJSON>> {
  const operator = await invitedOperator(deps, token);
  const { rpID } = relyingParty(deps);
  const existing = await passkeysOf(deps.store.db, operator.id);
  const options = await generateRegistrationOptions({
    rpName: deps.profile.operator.name,
    rpID,
    userName: operator.email,
    userDisplayName: operator.name,
    userID: new TextEncoder().encode(operator.id),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: JSON.parse(p.transports) as string[] })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    // Only the key types every verifier of a signed approval can check offline (WebCrypto in the
    // TypeScript client and the browser, `cryptography` in Python) and operator-keys.json can
    // publish. The library's default adds ML-DSA where the runtime has it (Node 24), and
    // Chromium then makes an ML-DSA-44 passkey whose approvals no verifier could check.
    supportedAlgorithmIDs: PUBLISHABLE_PASSKEY_ALGORITHMS,
  });
  return { challenge_id: await newChallenge(deps, options.challenge), options };
}

/** Verifies the new passkey against the invite's challenge, uses the invite up, and returns who signs in. */
export async function registerPasskey(deps: ServiceDeps, token: string, raw: unknown): Promise<SignedIn> {
  const operator = await invitedOperator(deps, token);
  const { challenge, response } = await challengeOf(deps, raw);
  const { rpID, origin } = relyingParty(deps);
  const verified = await verifying(() =>
    verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    }),
  );
  if (!verified.verified) throw failedCeremony('the response does not match the challenge.');
  const { credential } = verified.registrationInfo;
  const now = iso(deps.clock.now());
  const actor: Actor = { kind: 'operator', operatorId: operator.id, role: operator.role as Role };
  await withTransaction(deps.store.db, async (trx) => {
    // Single use, on every instance: the update that marks it used is the check.
    if (!(await consumeInvite(trx, sha256Hex(token), now))) throw invalidInvite();
    await insertPasskey(trx, {
      credential_id: credential.id,
      operator_id: operator.id,
      public_key: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: JSON.stringify(credential.transports ?? []),
      created_at: now,
      removed_at: null,
    });
    await recordAudit(trx, deps, { actor, action: 'passkey.registered', details: { credential_id: credential.id } });
    await logPasskey(trx, deps, { public_key: Buffer.from(credential.publicKey).toString('base64url'), created_at: now, removed_at: null });
  });
  return { actor, credential: { kind: 'passkey', id: credential.id } };
}

export async function authenticationOptions(deps: ServiceDeps): Promise<Ceremony<PublicKeyCredentialRequestOptionsJSON>> {
  // No allowCredentials: the passkey is discoverable, the authenticator offers the operator's own.
  const options = await generateAuthenticationOptions({ rpID: relyingParty(deps).rpID, userVerification: 'preferred' });
  return { challenge_id: await newChallenge(deps, options.challenge), options };
}

/** The outcome of a passkey sign-in: who, or why not (and whose passkey it was, for the throttle and the log). */
export type PasskeySignIn = SignedIn | { refusal: AppError; operatorId?: string };

export async function signInWithPasskey(deps: ServiceDeps, raw: unknown): Promise<PasskeySignIn> {
  let operatorId: string | undefined;
  try {
    const { challenge, response } = await challengeOf(deps, raw);
    const id = (response as { id?: unknown }).id;
    const passkey = typeof id === 'string' && id.length <= 1024 ? await findPasskey(deps.store.db, id) : undefined;
    if (!passkey) throw failedCeremony('this passkey is not registered here.');
    operatorId = passkey.operator_id;
    const operator = await findOperator(deps.store.db, passkey.operator_id);
    if (!operator || operator.disabled === 1) throw failedCeremony('this operator is disabled.');
    const { rpID, origin } = relyingParty(deps);
    const verified = await verifying(() =>
      verifyAuthenticationResponse({
        response: response as AuthenticationResponseJSON,
        expectedChallenge: challenge,
        expectedOrigin: origin,
        expectedRPID: rpID,
        credential: {
          id: passkey.credential_id,
          publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
          counter: passkey.counter,
          transports: JSON.parse(passkey.transports) as string[],
        },
        requireUserVerification: false,
      }),
    );
    if (!verified.verified) throw failedCeremony('the signature does not match.');
    await updatePasskeyCounter(deps.store.db, passkey.credential_id, verified.authenticationInfo.newCounter);
    return { actor: { kind: 'operator', operatorId: operator.id, role: operator.role as Role }, credential: { kind: 'passkey', id: passkey.credential_id } };
  } catch (error) {
    if (error instanceof AppError) return { refusal: error, ...(operatorId ? { operatorId } : {}) };
    throw error;
  }
}

/** What a verified approval assertion puts into the receipt (base64url, as the authenticator returned it). */
export interface ApprovalSignature {
  keyId: string;
  attestation: { authenticator_data: string; client_data_json: string; signature: string };
  /** SHA-256 (hex) of the signature: the assertion counts once. */
  assertionSha256: string;
}

const refusedSignature = (why: string) =>
  new AppError('invalid_signature', `The passkey signature is not accepted: ${why}`, { details: [`assertion: ${why}`] });

/**
 * Verifies an approval's WebAuthn assertion (docs/approvals.md): made by a live passkey of THIS
 * operator, over `challenge` (the approval challenge of the deliverable proposed now), for this
 * relying party. Another operator's passkey, another task's or deliverable's challenge, a tampered
 * signature: 400 `invalid_signature` naming why. Single use is the caller's (the assertion's hash).
 */
export async function verifyApprovalAssertion(
  db: Db,
  deps: ServiceDeps,
  operatorId: string | null,
  challenge: Uint8Array,
  raw: unknown,
): Promise<ApprovalSignature> {
  if (typeof raw !== 'object' || raw === null) throw refusedSignature('it is not a WebAuthn assertion (AuthenticationResponseJSON).');
  const response = raw as AuthenticationResponseJSON;
  const id = (raw as { id?: unknown }).id;
  const passkey = typeof id === 'string' && id.length <= 1024 ? await findPasskey(db, id) : undefined;
  if (!passkey || operatorId === null || passkey.operator_id !== operatorId) throw refusedSignature('it was not made by a passkey registered to you.');
  const keyId = await storedPasskeyKeyId(passkey.public_key);
  if (keyId === null) throw refusedSignature('this passkey’s key type cannot be published, so its signature could not be checked by others.');
  const { rpID, origin } = relyingParty(deps);
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: Buffer.from(challenge).toString('base64url'),
      expectedOrigin: origin,
      expectedRPID: rpID,
      expectedType: 'webauthn.get',
      // Not the stored counter: a proposal held for undo is checked when it commits, possibly after
      // the same passkey signed something else. An assertion counts once by its own hash instead.
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: 0,
        transports: JSON.parse(passkey.transports) as string[],
      },
      requireUserVerification: false,
    });
  } catch (error) {
    throw refusedSignature(error instanceof Error ? error.message.slice(0, 200) : 'unreadable assertion.');
  }
  if (!verified.verified) throw refusedSignature('the signature does not match.');
  if (verified.authenticationInfo.newCounter > passkey.counter) await updatePasskeyCounter(db, passkey.credential_id, verified.authenticationInfo.newCounter);
  const inner = response.response;
  return {
    keyId,
    attestation: { authenticator_data: inner.authenticatorData, client_data_json: inner.clientDataJSON, signature: inner.signature },
    assertionSha256: sha256Hex(Buffer.from(inner.signature, 'base64url')),
  };
}

/**
 * Appends a passkey's addition or removal to the public receipt log (an `operator_key` leaf), in
 * the transaction that registers or removes it (docs/approvals.md).
 */
export async function logPasskey(trx: Db, deps: ServiceDeps, row: Pick<PasskeyRow, 'public_key' | 'created_at' | 'removed_at'>): Promise<void> {
  const key = await operatorKey(row);
  if (key) await appendOperatorKeyLeaf(trx, deps.config.baseUrl, key, deps.clock.now());
}

/** /.well-known/operator-keys.json: every passkey's public key by thumbprint, without names, with since and until. */
export async function operatorKeys(deps: Pick<ServiceDeps, 'store'>): Promise<OperatorKey[]> {
  const keys = await Promise.all((await allPasskeys(deps.store.db)).map((row) => operatorKey(row)));
  return keys.filter((key): key is OperatorKey => key !== null);
}
