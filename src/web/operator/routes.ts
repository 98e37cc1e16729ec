import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../services/context.js';
import { registerLiveRoute } from './alerts/live.js';
import { registerPwaRoutes } from './alerts/pwa.js';
import { registerAuthRoutes } from './auth/auth-routes.js';
import { registerPasskeyRoutes } from './auth/passkey-routes.js';
import { consoleKit } from './console-kit.js';
import { registerListRoutes } from './inbox/list-routes.js';
import { registerApproveRoutes } from './queue/approve-routes.js';
import { registerInboxRoutes } from './queue/inbox-routes.js';
import { registerTalkRoutes } from './talk/talk-routes.js';
import { registerTemplateRoutes } from './talk/template-routes.js';
import { registerQuestionRoutes } from './task/question-routes.js';
import { registerResultRoutes } from './task/result-routes.js';
import { registerTaskRoutes } from './task/task-routes.js';
import { registerTeamRoutes } from './team/team-routes.js';

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
    registerApproveRoutes(scope, deps, kit);
    registerInboxRoutes(scope, deps, kit);
    registerTemplateRoutes(scope, deps, kit);
  });
}
