import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import {
  AuditListSchema,
  AuditQuerySchema,
  KeyCreatedSchema,
  KeyListSchema,
  OperatorCreatedSchema,
  OperatorInputSchema,
  OperatorListSchema,
  OperatorPatchSchema,
  OperatorSchema,
  PasskeyListSchema,
} from '../../domain/team/team-schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { listAudit } from '../../services/team/audit.js';
import { createKey, createOperator, listKeys, listOperators, listPasskeys, removePasskey, revokeKey, updateOperator } from '../../services/team/operators.js';
import { actorOf, requireAdmin } from '../admin-auth.js';
import { unvalidatedBody } from '../bodies/validator.js';

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorSchema]));
const OperatorParams = Type.Object({ operator_id: Type.String({ maxLength: 200 }) });
const KeyParams = Type.Object({ operator_id: Type.String({ maxLength: 200 }), key_id: Type.String({ maxLength: 200 }) });
// The router's parameter limit (200 characters, app.ts) bounds a passkey id here: 150 bytes, more than authenticators use (16-64).
const PasskeyParams = Type.Object({ operator_id: Type.String({ maxLength: 200 }), passkey_id: Type.String({ maxLength: 200 }) });

/**
 * The team API (contract "A team of operators"): operators, their personal keys, the audit log.
 * Thin adapters over services/team/operators.ts and services/team/audit.ts; each route declares its role.
 */
export async function registerTeamRoutes(server: FastifyInstance, deps: ServiceDeps): Promise<void> {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const noStore = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
  };
  const onRequest = [requireAdmin(deps), noStore];
  const tags = ['team'];

  app.post(
    '/api/v1/admin/operators',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminCreateOperator',
        summary: 'Invite an operator: returns a single-use invite_url (24 h) to register a passkey',
        tags,
        body: unvalidatedBody(OperatorInputSchema),
        response: { 201: OperatorCreatedSchema, ...errors(400, 401, 403, 413, 415, 422) },
      },
    },
    async (request, reply) => reply.code(201).send(await createOperator(deps, actorOf(request), request.body)),
  );

  app.get(
    '/api/v1/admin/operators',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: { operationId: 'adminListOperators', summary: 'Every operator, oldest first', tags, response: { 200: OperatorListSchema, ...errors(401, 403) } },
    },
    async () => ({ operators: await listOperators(deps) }),
  );

  app.patch(
    '/api/v1/admin/operators/:operator_id',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminUpdateOperator',
        summary: 'Change an operator’s role, or disable them (their keys and sessions stop at once); the last admin cannot be demoted or disabled',
        tags,
        params: OperatorParams,
        body: unvalidatedBody(OperatorPatchSchema),
        response: { 200: OperatorSchema, ...errors(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) => updateOperator(deps, actorOf(request), request.params.operator_id, request.body),
  );

  // Keys: an admin's, or the operator's own (the service refuses anyone else with 403).
  app.post(
    '/api/v1/admin/operators/:operator_id/keys',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminCreateKey',
        summary: 'Create a personal key (hto_…): shown once, stored hashed',
        tags,
        params: OperatorParams,
        response: { 201: KeyCreatedSchema, ...errors(401, 403, 404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await createKey(deps, actorOf(request), request.params.operator_id)),
  );

  app.get(
    '/api/v1/admin/operators/:operator_id/keys',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminListKeys',
        summary: 'An operator’s personal keys, without their secrets',
        tags,
        params: OperatorParams,
        response: { 200: KeyListSchema, ...errors(401, 403, 404) },
      },
    },
    async (request) => ({ keys: await listKeys(deps, actorOf(request), request.params.operator_id) }),
  );

  app.delete(
    '/api/v1/admin/operators/:operator_id/keys/:key_id',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminRevokeKey',
        summary: 'Revoke a personal key, at once on every instance',
        tags,
        params: KeyParams,
        response: { 204: Type.Null(), ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await revokeKey(deps, actorOf(request), request.params.operator_id, request.params.key_id);
      return reply.code(204).send(null);
    },
  );

  // Passkeys: listed and removed like keys (registering one takes an invite and a browser).
  app.get(
    '/api/v1/admin/operators/:operator_id/passkeys',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminListPasskeys',
        summary: 'An operator’s passkeys (removed ones with removed_at)',
        tags,
        params: OperatorParams,
        response: { 200: PasskeyListSchema, ...errors(401, 403, 404) },
      },
    },
    async (request) => ({ passkeys: await listPasskeys(deps, actorOf(request), request.params.operator_id) }),
  );

  app.delete(
    '/api/v1/admin/operators/:operator_id/passkeys/:passkey_id',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminRemovePasskey',
        summary: 'Remove a passkey: it no longer signs in, and the console sessions it opened end, at once on every instance',
        tags,
        params: PasskeyParams,
        response: { 204: Type.Null(), ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await removePasskey(deps, actorOf(request), request.params.operator_id, request.params.passkey_id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/v1/admin/audit',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminAudit',
        summary: 'The audit log, newest first: who did what, when',
        tags,
        querystring: AuditQuerySchema,
        response: { 200: AuditListSchema, ...errors(400, 401, 403) },
      },
    },
    async (request) => listAudit(deps, request.query),
  );
}
