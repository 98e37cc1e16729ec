import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError } from '../../domain/errors.js';
import { BLOCK_KINDS, BlockInputSchema, PageQuerySchema } from '../../domain/tasks/admin-schemas.js';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import { addBlock, listBlocks, removeBlock } from '../../services/console/blocklist.js';
import type { ServiceDeps } from '../../services/context.js';
import { actorOf, requireAdmin } from '../admin-auth.js';
import { unvalidatedBody } from '../bodies/validator.js';

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorSchema]));
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

const BlockEntrySchema = Type.Object({
  id: Type.String(),
  kind: Type.Enum([...BLOCK_KINDS]),
  value: Type.String({ description: 'For kind ip: the keyed hash of the client (the address itself is never stored).' }),
  reason: Nullable(Type.String()),
  source: Type.String({ description: 'admin (added by the operator) or auto (auto-block after repeated 429s).' }),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Nullable(Type.String({ format: 'date-time' })),
});

/**
 * The blocklist admin endpoints (contract "The operator (admin) API"): thin adapters over
 * services/console/blocklist.ts, which the operator console calls too and which validates the body from
 * BlockInputSchema (422 with details). The key is checked on request.
 */
export async function registerBlocklistRoutes(server: FastifyInstance, deps: ServiceDeps): Promise<void> {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = requireAdmin(deps);

  app.post(
    '/api/v1/admin/blocklist',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminAddBlock',
        summary: 'Block an IP address, e-mail address, e-mail domain or requester',
        tags: ['admin'],
        body: unvalidatedBody(BlockInputSchema),
        response: { 201: BlockEntrySchema, ...errors(400, 401, 415, 422) },
      },
    },
    async (request, reply) => {
      const entry = await addBlock(deps, actorOf(request), request.body);
      return reply.code(201).send(entry);
    },
  );

  app.get(
    '/api/v1/admin/blocklist',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminListBlocks',
        summary: 'Active blocklist entries, newest first, a page at a time',
        tags: ['admin'],
        querystring: PageQuerySchema,
        response: {
          200: Type.Object({
            blocklist: Type.Array(BlockEntrySchema),
            next_cursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null on the last page.' })),
          }),
          ...errors(400, 401),
        },
      },
    },
    async (request) => listBlocks(deps, request.query),
  );

  app.delete(
    '/api/v1/admin/blocklist/:id',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminRemoveBlock',
        summary: 'Remove a blocklist entry',
        tags: ['admin'],
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        response: { 204: Type.Null(), ...errors(401, 404) },
      },
    },
    async (request, reply) => {
      if (!(await removeBlock(deps, actorOf(request), request.params.id))) throw new AppError('not_found', 'No blocklist entry has this id.');
      return reply.code(204).send(null);
    },
  );
}
