import type { FastifyInstance } from 'fastify';
import type { Role } from '../domain/team/actor.js';

/** One registered route as the role check sees it. */
export interface RouteEntry {
  method: string;
  url: string;
  role: Role | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route of the app with its declared role, in registration order (filled by onRoute). */
    routeTable: readonly RouteEntry[];
  }
}

/**
 * Records every route as it is registered, so the role table can be walked: a test checks that no
 * admin route or console action is left without a declared `role` (team.roles.security.test.ts).
 * Installed on the root before any route; onRoute hooks reach routes of every child scope.
 */
export function recordRoutes(app: FastifyInstance): void {
  const table: RouteEntry[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) table.push({ method, url: route.url, role: route.config?.role });
  });
}
