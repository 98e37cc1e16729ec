import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { actorOf } from '../../../http/admin-auth.js';
import { subscribePush, unsubscribePush } from '../../../services/alerts/push.js';
import { loadSharp } from '../../../services/attachments/sharp.js';
import type { ServiceDeps } from '../../../services/context.js';
import { ICON_COLOR, ICON_SVG } from '../../favicon.js';
import { staticAsset } from '../../static-assets.js';
import { FOR_OPERATOR } from '../console-kit.js';

/**
 * The console as an installable app (contract "Operator alerts"): a web app manifest, icons drawn
 * from the service's one SVG (favicon.ts) by sharp (rendered once, on first request), and a service worker that shows pushed
 * notices and opens the task on a tap. The worker lives at /operator/sw.js and controls /operator
 * (hence Service-Worker-Allowed). Subscribing is a console action: session cookie and CSRF token.
 */

const THEME = ICON_COLOR;
const ICON_SIZES = [192, 512] as const;

export const MANIFEST = {
  name: 'Operator desk',
  short_name: 'Operator',
  description: 'The operator console of the human-in-the-loop task service.',
  start_url: '/operator',
  scope: '/operator',
  display: 'standalone',
  background_color: '#f5f6f8',
  theme_color: THEME,
  icons: ICON_SIZES.map((size) => ({ src: `/operator/assets/icon-${size}.png`, sizes: `${size}x${size}`, type: 'image/png', purpose: 'any maskable' })),
};

/** Shows what the service pushed; a tap focuses or opens that console page (never another origin). */
export const SERVICE_WORKER_JS = staticAsset('sw.js', '/operator');

const icons = new Map<number, Promise<Buffer>>();
function icon(size: number): Promise<Buffer> {
  let png = icons.get(size);
  if (!png) {
    const rendering = loadSharp().then((sharp) => sharp(Buffer.from(ICON_SVG)).resize(size, size).png().toBuffer());
    png = rendering;
    icons.set(size, png);
    // A failed rendering is not kept: the next request tries again.
    rendering.catch(() => {
      if (icons.get(size) === rendering) icons.delete(size);
    });
  }
  return png;
}

export function registerPwaRoutes(scope: FastifyInstance, deps: ServiceDeps, guarded: RouteShorthandOptions): void {
  // Browsers fetch the manifest, icons and worker without the session: nothing in them is private.
  const open = { config: { kind: 'none' as const }, schema: { hide: true } };
  scope.get('/operator/manifest.webmanifest', open, async (_request, reply) =>
    reply.header('Cache-Control', 'no-cache').type('application/manifest+json; charset=utf-8').send(JSON.stringify(MANIFEST)),
  );
  for (const size of ICON_SIZES) {
    scope.get(`/operator/assets/icon-${size}.png`, open, async (_request, reply) =>
      reply
        .header('Cache-Control', 'public, max-age=86400')
        .type('image/png')
        .send(await icon(size)),
    );
  }
  scope.get('/operator/sw.js', open, async (_request, reply) =>
    reply.header('Cache-Control', 'no-cache').header('Service-Worker-Allowed', '/operator').type('text/javascript; charset=utf-8').send(SERVICE_WORKER_JS.body),
  );

  scope.post('/operator/push/subscriptions', { ...guarded, config: FOR_OPERATOR }, async (request: FastifyRequest, reply: FastifyReply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const { _csrf: _token, ...subscription } = body;
    return reply.code(201).send(await subscribePush(deps, actorOf(request), subscription));
  });
  scope.post('/operator/push/unsubscribe', { ...guarded, config: FOR_OPERATOR }, async (request: FastifyRequest, reply: FastifyReply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    return reply.send({ removed: await unsubscribePush(deps, body.endpoint) });
  });
}
