import cors from '@fastify/cors';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import { registerA2a } from './a2a/routes.js';
import type { AppDeps } from './deps.js';
import { registerOpenApi } from './docs/openapi.js';
import { abuseSteps } from './http/abuse-hooks.js';
import { quietRequestLog } from './http/admin-auth.js';
import { installJsonParser } from './http/bodies/json-body.js';
import { validatorCompiler } from './http/bodies/validator.js';
import { responseHygiene } from './http/caching.js';
import { trustsProxyHops } from './http/client.js';
import { installConnectionLimits, serverTimeoutOptions } from './http/connections/connections.js';
import { installErrorHandler } from './http/errors.js';
import { clientErrorHandler, frameworkErrorHandler } from './http/framework-errors.js';
import { installBodyGuards, requestGuards, requestIdFor } from './http/guards.js';
import { installFastReads } from './http/lanes/fast-reads.js';
import { installMetricsHooks, registerMetricsRoute } from './http/metrics.js';
import { installNotFound } from './http/not-found.js';
import { installPipeline, type RequestStep } from './http/pipeline.js';
import { recordRoutes } from './http/route-table.js';
import { registerAdminRoutes } from './http/routes/admin.js';
import { registerBlocklistRoutes } from './http/routes/admin-blocklist.js';
import { registerImportRoutes } from './http/routes/admin-import.js';
import { registerOutboxRoutes } from './http/routes/admin-outbox.js';
import { registerTeamRoutes } from './http/routes/admin-team.js';
import { registerWebhookRoutes } from './http/routes/admin-webhooks.js';
import { registerAttachmentRoutes } from './http/routes/attachments.js';
import { registerCoverageRoutes } from './http/routes/coverage.js';
import { registerDocuments } from './http/routes/documents.js';
import { registerPublicRoutes } from './http/routes/public.js';
import { registerQuestionRoutes } from './http/routes/questions.js';
import { registerReceiptLogRoutes } from './http/routes/receipt-log.js';
import { registerThreadRoutes } from './http/routes/threads.js';
import { registerWithdrawalRoutes } from './http/routes/withdrawals.js';
import { lazySerializers } from './http/serializer.js';
import { requestLoggerFactory } from './logger.js';
import { registerMcp } from './mcp/routes.js';
import { registerOperatorConsole } from './web/operator.js';
import { notFoundPage, registerPages } from './web/pages.js';

const EXPOSED_HEADERS = [
  'Location',
  'RateLimit-Policy',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Link',
  'Mcp-Session-Id',
  'ETag',
  'Preference-Applied',
  'Idempotent-Replayed',
  'X-Dev-Mode',
  'Accept-Signature',
];
// What a browser client needs to check a downloaded file and resume it (attachments).
const FILE_HEADERS = ['Content-Disposition', 'Content-Digest', 'Repr-Digest', 'Content-Range', 'Accept-Ranges'];

/**
 * Builds the whole application from its dependencies, with no side effects: no listening, no
 * timers, no store opening. Production (server.ts) and every test use this same function.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // Errors raised before any hook runs still carry the headers every response carries.
  const early = { policy: deps.abuse.policies.read.policy, exposed: EXPOSED_HEADERS };
  // Typed as the default instance: the pino logger is passed in, the server is plain HTTP/1.1.
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    childLoggerFactory: requestLoggerFactory as NonNullable<FastifyServerOptions['childLoggerFactory']>,
    bodyLimit: deps.config.limits.maxBodyBytes,
    // TRUST_PROXY=N: the client is the address N hops back in X-Forwarded-For.
    trustProxy: trustsProxyHops(deps.config.trustProxy),
    // A caller's X-Request-Id is kept when it is a plain token, so it can quote it back; anything
    // else (long, or with characters a log or header should not carry) gets a fresh UUID.
    requestIdHeader: false,
    genReqId: requestIdFor,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // While closing, the request guards answer the contract's 503 instead of Fastify's own body.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler(early),
    clientErrorHandler: clientErrorHandler(early),
    forceCloseConnections: 'idle',
    logController: new LogController({ disableRequestLogging: quietRequestLog(deps.adminKeyHash) }),
    // Response serializers are compiled on first use (http/serializer.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
    ...serverTimeoutOptions(deps.config.server),
  });
  app.setValidatorCompiler(validatorCompiler);
  recordRoutes(app);
  // The API speaks JSON only: any other body is 415 (the web pages add their form parser in their own scope).
  app.removeContentTypeParser('text/plain');
  installJsonParser(app);
  installErrorHandler(app, deps.store.faults);
  installNotFound(app, deps, notFoundPage);
  const countResponse = installMetricsHooks(app, deps);

  // CORS (any origin, no credentials): a simple request only needs two fixed headers, set by a
  // step of the pipeline. Preflights are answered by @fastify/cors, registered in a scope of its
  // own that holds only its catch-all OPTIONS route, so its per-request hook (a copy of its
  // options, the origin resolved anew, the lists joined again) runs on preflights alone.
  const exposed = [...EXPOSED_HEADERS, ...FILE_HEADERS].join(', ');
  // The development profile says so on every response, so nobody mistakes it for a deployment.
  const devMode = deps.config.dev.enabled;
  const corsHeaders: RequestStep = (_request, reply) => {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', exposed);
    if (devMode) reply.header('x-dev-mode', 'true');
    return undefined;
  };
  // Every request's checks and headers, in this order, as one hook per phase (http/pipeline.ts).
  const connections = installConnectionLimits(app, deps.config.server, deps.config.trustProxy === 0);
  const abuse = abuseSteps(app, deps);
  const guards = requestGuards(app);
  // Repeated status reads of an unchanged task are answered before the framework (http/lanes/fast-reads.ts).
  const recordRead = installFastReads(app, deps, { countResponse, isOverCap: connections.isOverCap, draining: guards.draining });
  installPipeline(app, {
    request: [corsHeaders, guards.step, connections.refuse, abuse.request, connections.lift],
    response: [responseHygiene, abuse.response, recordRead],
  });
  // A signed request's signature is verified after the pipeline's checks (http/abuse-hooks.ts).
  app.addHook('onRequest', abuse.signed);
  installBodyGuards(app);
  // After the pipeline, so preflights go through it too.
  await app.register(async (preflights) => {
    await preflights.register(cors, {
      origin: '*',
      methods: 'GET, HEAD, POST, PATCH, DELETE, OPTIONS',
      allowedHeaders: [
        'Content-Type',
        'Idempotency-Key',
        'Authorization',
        'Accept',
        'Mcp-Session-Id',
        'Mcp-Protocol-Version',
        'Last-Event-ID',
        'X-Request-Id',
        'If-None-Match',
        'Prefer',
        'Range',
        'If-Range',
        'Content-Disposition',
        'Signature',
        'Signature-Input',
        'Signature-Agent',
        'A2A-Version',
        'A2A-Extensions',
      ].join(', '),
      exposedHeaders: exposed,
      maxAge: 86400,
      strictPreflight: false,
    });
  });

  await registerOpenApi(app, deps);
  registerPublicRoutes(app, deps);
  registerCoverageRoutes(app, deps);
  registerReceiptLogRoutes(app, deps);
  await registerAdminRoutes(app, deps);
  await registerAttachmentRoutes(app, deps);
  await registerBlocklistRoutes(app, deps);
  await registerImportRoutes(app, deps);
  await registerOutboxRoutes(app, deps);
  await registerWebhookRoutes(app, deps);
  await registerTeamRoutes(app, deps);
  registerQuestionRoutes(app, deps);
  registerThreadRoutes(app, deps);
  registerWithdrawalRoutes(app, deps);
  registerMetricsRoute(app, deps);
  await registerMcp(app, deps);
  await registerA2a(app, deps);
  await registerDocuments(app, deps);
  await registerPages(app, deps);
  await registerOperatorConsole(app, deps);
  // Held reads are answered (304, "unchanged") before the server waits for in-flight requests;
  // the change feed's LISTEN connection (PostgreSQL) lives as long as the app.
  app.addHook('preClose', async () => deps.waits.close());
  app.addHook('onClose', async () => deps.changes.close());
  return app;
}
