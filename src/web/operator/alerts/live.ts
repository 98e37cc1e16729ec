import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type LiveEvent, liveEvent, unseenTasks } from '../../../services/alerts/live-console.js';
import type { ServiceDeps } from '../../../services/context.js';
import type { Change } from '../../../store/change-feed.js';
import { readSession } from '../auth/session.js';
import { type ConsoleKit, FOR_OPERATOR } from '../console-kit.js';

/**
 * GET /operator/events: server-sent events for open console pages, authenticated by the session
 * cookie like every console page. One `change` event per task or message change (from the change
 * feed), `resync` after the PostgreSQL LISTEN connection came back (changes may have been missed),
 * and a comment every HEARTBEAT_MS so proxies keep the stream open. The console's script updates
 * the queue and the title; without it the pages work with reload.
 *
 * A stream lives no longer than its session: signing out ends the session's streams on this
 * instance at once, and every stream checks its session again before each event and each
 * heartbeat, so a sign-out on another instance (or the session's expiry) ends it before it
 * carries anything more.
 */

const HEARTBEAT_MS = 25_000;
/** Changes whose event is remembered for the streams that have not sent it yet. */
const SHARED_EVENTS = 256;

/** The open event streams, so that signing out can end its session's streams. */
export interface LiveStreams {
  endSession(sid: string): void;
}

export function registerLiveRoute(scope: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): LiveStreams {
  // Open streams never go idle, so closing the app ends them first (or close would wait forever).
  const streams = new Map<() => void, string>();
  // One event per change, whatever the number of open streams: each stream would otherwise count
  // the unseen tasks again (100 consoles, 100 counts per change, starving everything else).
  const events = new Map<Change, Promise<LiveEvent>>();
  const eventOf = (change: Change): Promise<LiveEvent> => {
    let event = events.get(change);
    if (event === undefined) {
      if (events.size >= SHARED_EVENTS) events.delete(events.keys().next().value as Change);
      event = liveEvent(deps, change);
      // A failed read is not kept: the next stream asks again.
      event.catch(() => events.delete(change));
      events.set(change, event);
    }
    return event;
  };
  scope.addHook('preClose', async () => {
    for (const close of [...streams.keys()]) close();
  });
  scope.get('/operator/events', { ...kit.guarded, config: FOR_OPERATOR }, async (request: FastifyRequest, reply: FastifyReply) => {
    const { sid } = kit.session(request);
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

    // Events go out in order, each after the session was found still signed in; a failed read is
    // logged, the stream stays.
    let queue = Promise.resolve();
    const whileSignedIn = (step: () => Promise<void> | void) => {
      queue = queue
        .then(async () => {
          if (!open) return;
          if (!(await readSession(deps, request))) return close();
          await step();
        })
        .catch((error: unknown) => request.log.warn({ err: error }, 'live console: could not read the change'));
    };
    const stopChanges = deps.changes.subscribe((change: Change) => whileSignedIn(async () => send('change', await eventOf(change))));
    const stopReconnect = deps.changes.onReconnect(() => whileSignedIn(() => send('resync', {})));
    const heartbeat = setInterval(() => whileSignedIn(() => void res.write(': keep-alive\n\n')), HEARTBEAT_MS);
    const close = () => {
      if (!open) return;
      open = false;
      clearInterval(heartbeat);
      stopChanges();
      stopReconnect();
      streams.delete(close);
      res.end();
    };
    streams.set(close, sid);
    request.raw.on('close', close);
  });
  return {
    endSession: (sid) => {
      for (const [close, owner] of [...streams]) if (owner === sid) close();
    },
  };
}
