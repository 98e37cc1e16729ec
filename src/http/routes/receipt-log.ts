import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError } from '../../domain/errors.js';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { currentCheckpoint, parseTilePath, readTile, receiptProof } from '../../services/receipt-log/receipt-log.js';

/**
 * The public receipt log as C2SP tlog-tiles (docs/receipt-log.md): /log/checkpoint, /log/vkey,
 * /log/tile/<L>/<N>[.p/<W>], /log/tile/entries/<N>[.p/<W>], and each task's tlog-proof. Reads,
 * counted against the read limit.
 */

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorSchema]));
const TEXT = 'text/plain; charset=utf-8';
/** A checkpoint changes with every integration: cached briefly (the contract allows up to 60 s). */
const CHECKPOINT_CACHE = 'public, max-age=10';
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** A partial tile never changes either, but is soon replaced by a wider one. */
const PARTIAL_CACHE = 'public, max-age=60';

export function registerReceiptLogRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  app.get(
    '/log/checkpoint',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getLogCheckpoint',
        summary: 'The receipt log’s latest signed checkpoint (C2SP tlog-checkpoint)',
        tags: ['documents'],
        produces: ['text/plain'],
        response: { 200: { type: 'string', description: 'A signed note: origin, tree size, base64 root hash, then the signature line.' }, ...errors(503) },
      },
    },
    async (_request, reply) => {
      const checkpoint = await currentCheckpoint(deps);
      return reply.header('Cache-Control', CHECKPOINT_CACHE).type(TEXT).send(checkpoint.note);
    },
  );

  app.get(
    '/log/checkpoint.tsr',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getLogCheckpointTimestamp',
        summary: 'The RFC 3161 time-stamp of the latest checkpoint (TSA_URL); 404 until it has one',
        tags: ['documents'],
        produces: ['application/timestamp-reply'],
        response: { 200: { type: 'string', description: 'A TimeStampResp (DER) over the SHA-256 of /log/checkpoint as served.' }, ...errors(404, 503) },
      },
    },
    async (_request, reply) => {
      const checkpoint = await currentCheckpoint(deps);
      if (checkpoint.tsr === null) throw new AppError('not_found', 'The current checkpoint has no time-stamp (yet, or TSA_URL is not set).');
      return reply.header('Cache-Control', CHECKPOINT_CACHE).type('application/timestamp-reply').send(Buffer.from(checkpoint.tsr, 'base64'));
    },
  );

  app.get(
    '/log/vkey',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getLogVerifierKey',
        summary: 'The receipt log’s verifier key (C2SP signed-note, Ed25519)',
        tags: ['documents'],
        produces: ['text/plain'],
        response: { 200: { type: 'string', description: '<origin>+<hex key hash>+<base64 of 0x01 and the public key>' } },
      },
    },
    async (_request, reply) => {
      // The log's identity: known from the start, needs no store.
      return reply.header('Cache-Control', 'public, max-age=3600').type(TEXT).send(`${deps.receiptLog.vkey}\n`);
    },
  );

  app.get(
    '/log/tile/*',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getLogTile',
        summary: 'A tile of the receipt log (C2SP tlog-tiles): hashes, or an entry bundle',
        tags: ['documents'],
        produces: ['application/octet-stream'],
        response: {
          200: { type: 'string', description: 'Hashes (32 bytes each) or entries (big-endian uint16 length, then the compact JWS).' },
          ...errors(404, 503),
        },
      },
    },
    async (request, reply) => {
      const tile = parseTilePath((request.params as { '*'?: string })['*'] ?? '');
      if (!tile) throw new AppError('not_found', 'No such tile: paths are /log/tile/<L>/<N>[.p/<W>] or /log/tile/entries/<N>[.p/<W>] (tlog-tiles).');
      const { body, full } = await readTile(deps, tile);
      return reply
        .header('Cache-Control', full ? IMMUTABLE : PARTIAL_CACHE)
        .type('application/octet-stream')
        .send(body);
    },
  );

  app.get(
    '/api/v1/tasks/:task_id/receipt-proof',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getReceiptProof',
        summary: 'The inclusion proof of a task’s receipt in the public log (C2SP tlog-proof)',
        description:
          'text/plain: c2sp.org/tlog-proof@v1, the leaf index, the inclusion proof, a blank line and the checkpoint. 404 not_found until the receipt is integrated.',
        tags: ['tasks'],
        params: Type.Object({ task_id: Type.String({ maxLength: 200 }) }),
        produces: ['text/plain'],
        response: { 200: { type: 'string' }, ...errors(404, 503) },
      },
    },
    async (request, reply) => {
      const proof = await receiptProof(deps, (request.params as { task_id: string }).task_id);
      return reply.header('Cache-Control', 'no-cache').type(TEXT).send(proof);
    },
  );
}
