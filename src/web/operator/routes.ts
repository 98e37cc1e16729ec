import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../services/context.js';
import { registerAuthRoutes } from './auth-routes.js';
import { consoleKit } from './console-kit.js';
import { registerInboxRoutes } from './inbox-routes.js';
import { registerListRoutes } from './list-routes.js';
import { registerLiveRoute } from './live.js';
import { registerPasskeyRoutes } from './passkey-routes.js';
import { registerPwaRoutes } from './pwa.js';
import { registerQuestionRoutes } from './question-routes.js';
import { registerResultRoutes } from './result-routes.js';
import { registerTalkRoutes } from './talk-routes.js';
import { registerTaskRoutes } from './task-routes.js';
import { registerTeamRoutes } from './team-routes.js';
import { registerTemplateRoutes } from './template-routes.js';

/**
 * The operator console at /operator: server-rendered pages over the same services as the admin
 * API. Registered in its own encapsulated scope, so the form-body parser, the HTML error pages and
 * the strict security headers apply here and nowhere else (the JSON API keeps answering 415 to forms).
 */
export async function registerConsoleRoutes(app: FastifyInstance, deps: ServiceDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(formbody);
    const kit = consoleKit(scope, deps);
    const live = registerLiveRoute(scope, deps, kit);
    registerAuthRoutes(scope, deps, kit, live);
    registerTaskRoutes(scope, deps, kit);
    registerQuestionRoutes(scope, deps, kit);
    registerListRoutes(scope, deps, kit);
    registerTalkRoutes(scope, deps, kit);
    registerPwaRoutes(scope, deps, kit.guarded);
    registerResultRoutes(scope, deps, kit);
    registerPasskeyRoutes(scope, deps, kit);
    registerTeamRoutes(scope, deps, kit);
    registerInboxRoutes(scope, deps, kit);
    registerTemplateRoutes(scope, deps, kit);
  });
}
