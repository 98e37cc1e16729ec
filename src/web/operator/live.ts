import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { ServiceDeps } from '../../services/context.js';
import { liveEvent, unseenTasks } from '../../services/live-console.js';
import type { Change } from '../../store/change-feed.js';

/**
 * GET /operator/events: server-sent events for open console pages, authenticated by the session
 * cookie like every console page. One `change` event per task or message change (from the change
 * feed), `resync` after the PostgreSQL LISTEN connection came back (changes may have been missed),
 * and a comment every HEARTBEAT_MS so proxies keep the stream open. The console's script updates
 * the queue and the title; without it the pages work with reload.
 */

const HEARTBEAT_MS = 25_000;

export function registerLiveRoute(scope: FastifyInstance, deps: ServiceDeps, guarded: RouteShorthandOptions): void {
  // Open streams never go idle, so closing the app ends them first (or close would wait forever).
  const streams = new Set<() => void>();
  scope.addHook('preClose', async () => {
    for (const close of [...streams]) close();
  });
  scope.get('/operator/events', guarded, async (request: FastifyRequest, reply: FastifyReply) => {
    const initial = await unseenTasks(deps);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
      Connection: 'keep-alive',
    });
    let open = true;
    const send = (event: string, data: unknown) => {
      if (open) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    // The client reconnects after 3 s when the stream drops (a restart, a proxy timeout).
    res.write('retry: 3000\n\n');
    send('hello', { unseen_tasks: initial });

    // Events go out in order, one store read each; a failed read is logged, the stream stays.
    let queue = Promise.resolve();
    const onChange = (change: Change) => {
      queue = queue
        .then(async () => send('change', await liveEvent(deps, change)))
        .catch((error: unknown) => request.log.warn({ err: error }, 'live console: could not read the change'));
    };
    const stopChanges = deps.changes.subscribe(onChange);
    const stopReconnect = deps.changes.onReconnect(() => send('resync', {}));
    const heartbeat = setInterval(() => open && res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const close = () => {
      if (!open) return;
      open = false;
      clearInterval(heartbeat);
      stopChanges();
      stopReconnect();
      streams.delete(close);
      res.end();
    };
    streams.add(close);
    request.raw.on('close', close);
  });
}
