import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type, { type Static } from 'typebox';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import { operatorAttachments, removeAttachment, uploadAttachment } from '../../services/attachments/attachments.js';
import { openFile, thumbnail } from '../../services/attachments/files.js';
import type { ServiceDeps } from '../../services/context.js';
import { actorOf, requireAdmin } from '../admin-auth.js';
import { acceptRawBodies, withUpload } from '../bodies/raw-upload.js';
import { downloadHeaders, sendStoredFile } from '../file-reply.js';

/**
 * Evidence files (contract "Evidence: attachments in deliverables"): the operator's upload, list
 * and removal, and the public download once the task is delivered. Thin adapters over
 * services/attachments/attachments.ts and services/attachments/files.ts.
 */

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorSchema]));
const TaskParams = Type.Object({ task_id: Type.String({ maxLength: 200 }) });
const FileParams = Type.Object({ task_id: Type.String({ maxLength: 200 }), attachment_id: Type.String({ maxLength: 200 }) });

export const UploadedAttachmentSchema = Type.Object({
  attachment_id: Type.String({ description: 'att-<year>-<32 hex>' }),
  name: Type.String({ description: 'The stored, safe file name.' }),
  media_type: Type.String({ description: 'Detected from the bytes (application/octet-stream when they prove nothing).' }),
  size: Type.Integer({ description: 'Bytes as stored (after metadata stripping).' }),
  sha256: Type.String({ description: 'SHA-256 (hex) of the stored bytes: what the receipt will sign.' }),
});

const OperatorAttachmentSchema = Type.Object({
  ...UploadedAttachmentSchema.properties,
  created_at: Type.String({ format: 'date-time' }),
  metadata_kept: Type.Boolean({ description: 'Image metadata (EXIF, GPS) was kept because the task has location_required: true.' }),
  has_thumbnail: Type.Boolean(),
});

const Binary = { type: 'string', format: 'binary' } as const;
/** Long enough for a client to keep a delivered file; files never change once delivered. */
const PUBLIC_CACHE = 'private, max-age=86400, immutable';

export async function registerAttachmentRoutes(server: FastifyInstance, deps: ServiceDeps): Promise<void> {
  // Typed from the route schemas: handlers read params without casts.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const noStore = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
  };
  const onRequest = [requireAdmin(deps), noStore];

  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    acceptRawBodies(plain);
    scope.post(
      '/api/v1/admin/tasks/:task_id/attachments',
      {
        onRequest,
        config: { kind: 'admin', role: 'operator' },
        schema: {
          operationId: 'adminUploadAttachment',
          summary: 'Attach a file to an accepted task (the raw file is the body)',
          description:
            'Send the file itself as the body with its Content-Type and `Content-Disposition: attachment; filename="photo.jpg"` ' +
            "(or filename*=UTF-8''…). Streamed and cut at ATTACHMENT_MAX_BYTES (413 payload_too_large, as past ATTACHMENTS_MAX_PER_TASK files). " +
            'The media type is detected from the bytes; image metadata (EXIF, XMP, GPS) is stripped before hashing unless the task has ' +
            'location_required: true. Only an accepted task takes files (409 invalid_transition otherwise).',
          tags: ['admin'],
          params: TaskParams,
          consumes: ['*/*'],
          body: { ...Binary, description: 'The file.' },
          response: { 201: UploadedAttachmentSchema, ...errors(400, 401, 404, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const { task_id } = request.params;
        const created = await withUpload(request, reply, (input) => uploadAttachment(deps, actorOf(request), task_id, input));
        return reply.code(201).send(created);
      },
    );
  });

  app.get(
    '/api/v1/admin/tasks/:task_id/attachments',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminListAttachments',
        summary: "A task's files, in the order they were attached",
        tags: ['admin'],
        params: TaskParams,
        response: { 200: Type.Object({ attachments: Type.Array(OperatorAttachmentSchema) }), ...errors(401, 404) },
      },
    },
    async (request) => ({ attachments: await operatorAttachments(deps, request.params.task_id) }),
  );

  // Untyped reply (an empty 204); the params are typed by the route's generic instead.
  server.delete<{ Params: Static<typeof FileParams> }>(
    '/api/v1/admin/tasks/:task_id/attachments/:attachment_id',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminDeleteAttachment',
        summary: 'Remove a file before delivery',
        tags: ['admin'],
        params: FileParams,
        response: { 204: { type: 'null', description: 'Removed.' }, ...errors(401, 404, 409) },
      },
    },
    async (request, reply) => {
      const { task_id, attachment_id } = request.params;
      await removeAttachment(deps, actorOf(request), task_id, attachment_id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/v1/tasks/:task_id/attachments/:attachment_id',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getAttachment',
        summary: 'Download a delivered file',
        description:
          'Public to whoever holds the task id, once the task is delivered (404 before). Always a download (Content-Disposition: attachment, ' +
          'X-Content-Type-Options: nosniff, CSP sandbox). Content-Digest: sha-256=:<base64>: (RFC 9530) equals the sha256 in the task and the receipt. ' +
          'Strong ETag; single byte ranges (Range: bytes=a-b → 206 with Content-Range; past the end → 416).',
        tags: ['tasks'],
        params: FileParams,
        headers: Type.Object({ range: Type.Optional(Type.String({ maxLength: 200, description: 'bytes=<start>-<end>, one range.' })) }),
        produces: ['application/octet-stream'],
        response: {
          200: { ...Binary, description: 'The file, with its media type.' },
          206: { ...Binary, description: 'The requested byte range (Content-Range names it).' },
          304: { type: 'null', description: 'Not modified: If-None-Match matched the ETag.' },
          404: ErrorSchema,
          416: { type: 'null', description: 'Range not satisfiable: Content-Range: bytes */<size>.' },
        },
      },
    },
    async (request, reply) => {
      const { task_id, attachment_id } = request.params;
      const file = await openFile(deps, task_id, attachment_id, 'public');
      return sendStoredFile(deps, request, reply, file, PUBLIC_CACHE);
    },
  );

  // Untyped reply (the WebP bytes); the params are typed by the route's generic instead.
  server.get<{ Params: Static<typeof FileParams> }>(
    '/api/v1/tasks/:task_id/attachments/:attachment_id/thumbnail',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getAttachmentThumbnail',
        summary: 'A small WebP preview of a delivered image',
        description:
          'At most 320 px on its longer side, generated once at upload and kept in the store; 404 for files that are not images, and before delivery.',
        tags: ['tasks'],
        params: FileParams,
        produces: ['image/webp'],
        response: { 200: { ...Binary, description: 'The preview (image/webp).' }, 404: ErrorSchema },
      },
    },
    async (request, reply) => {
      const { task_id, attachment_id } = request.params;
      const preview = await thumbnail(deps, task_id, attachment_id, 'public');
      downloadHeaders(reply, 'thumbnail.webp', 'image/webp', preview.sha256);
      return reply.header('Cache-Control', PUBLIC_CACHE).send(preview.data);
    },
  );
}
