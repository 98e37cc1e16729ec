import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { publicKeys } from '../../receipts/keys.js';
import type { ServiceDeps } from '../../services/context.js';
import { operatorKeys } from '../../services/team/passkeys.js';

const JwkSchema = Type.Object(
  {
    kty: Type.String({ description: 'OKP' }),
    crv: Type.String({ description: 'Ed25519' }),
    x: Type.String({ description: 'The public key, base64url.' }),
    kid: Type.String({ description: 'RFC 7638 thumbprint (SHA-256) of the key; receipts name it in their header.' }),
    alg: Type.String({ description: 'EdDSA' }),
    use: Type.String({ description: 'sig' }),
  },
  { description: 'The public part of a receipt-signing key.' },
);

export const JwksSchema = Type.Object(
  { keys: Type.Array(JwkSchema, { description: 'The active key first, then retired keys, which stay published so old receipts keep verifying.' }) },
  { description: 'JSON Web Key Set for verifying receipts.' },
);

export const OperatorKeysSchema = Type.Object(
  {
    keys: Type.Array(
      Type.Object({
        key_id: Type.String({ description: 'RFC 7638 thumbprint (SHA-256, base64url) of the JWK: what a receipt approval names.' }),
        jwk: Type.Record(Type.String(), Type.String(), { description: 'The passkey’s public key as a JWK (EC P-256, OKP Ed25519 or RSA).' }),
        since: Type.String({ format: 'date-time', description: 'When the passkey was registered.' }),
        until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it was removed; null while valid.' }),
      }),
      { description: 'Every passkey an operator registered, removed ones too, oldest first; no names.' },
    ),
  },
  { description: 'The operators’ passkeys, by thumbprint: check the attestations of a receipt’s approvals (receipt_version 3) against them.' },
);

/** /.well-known/jwks.json: the public part of every receipt-signing key, active and retired. */
export function registerJwksRoute(app: FastifyInstance, deps: ServiceDeps): void {
  // The last key set read, served while the store is down: verifying a receipt needs no store.
  let lastKnown: Awaited<ReturnType<typeof publicKeys>> | undefined;
  const keys = async () => {
    try {
      lastKnown = await publicKeys(deps.store.db);
    } catch (error) {
      if (!lastKnown) throw error;
      deps.log.warn({ err: error }, 'jwks: store unavailable, serving the last key set read');
    }
    return lastKnown;
  };
  app.get(
    '/.well-known/jwks.json',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getJwks',
        summary: 'Public keys for verifying receipts',
        tags: ['documents'],
        response: { 200: JwksSchema },
      },
    },
    async (_request, reply) => {
      // Short caching: a verifier that meets an unknown kid after a rotation refetches anyway.
      reply.header('Cache-Control', 'public, max-age=300');
      return { keys: await keys() };
    },
  );

  // The operators' passkeys (docs/approvals.md): anonymous, each addition and removal also in the receipt log.
  app.get(
    '/.well-known/operator-keys.json',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getOperatorKeys',
        summary: 'The operators’ passkey public keys, for verifying the approvals in receipts',
        tags: ['documents'],
        response: { 200: OperatorKeysSchema },
      },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', 'public, max-age=300');
      return { keys: await operatorKeys(deps) };
    },
  );

  // The service's Web Bot Auth key directory (its webhooks carry Signature-Agent: BASE_URL): the
  // same Ed25519 keys, whose kid is the RFC 7638 thumbprint a signature's keyid names.
  app.get(
    '/.well-known/http-message-signatures-directory',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getSignaturesDirectory',
        summary: "The service's HTTP Message Signatures directory (Web Bot Auth): the keys that sign its webhooks",
        tags: ['documents'],
        produces: ['application/http-message-signatures-directory+json'],
        response: { 200: JwksSchema },
      },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', 'public, max-age=300');
      reply.type('application/http-message-signatures-directory+json');
      return { keys: await keys() };
    },
  );
}
