import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { ServerSettings } from '../../config.js';
import { AppError } from '../../domain/errors.js';
import type { RequestStep } from '../pipeline.js';
import { guardSlowClients } from './slow-clients.js';

/**
 * Connection handling: slow or silent clients and floods of sockets cannot hold the service.
 *
 * - The request (headers and body) must arrive within REQUEST_TIMEOUT_MS, the headers within
 *   HEADERS_TIMEOUT_MS (Node answers 408 and closes). Node's own request timeout does not always
 *   fire once the headers are parsed (docs/operations.md#slow-clients-and-connection-floods-srchttpconnectionsconnectionsts: it came and went with other connections and with
 *   the process's start-up), so the service bounds each body itself (slow-clients.ts): a body not
 *   complete REQUEST_TIMEOUT_MS after its headers is answered 408 and its connection closed.
 * - A connection whose output has not drained for IDLE_TIMEOUT_MS (a client that sends requests
 *   and never reads the answers) is closed, and one connection may have at most 16 pipelined
 *   requests waiting for their answers (slow-clients.ts).
 *   Idle keep-alive connections close after
 *   KEEP_ALIVE_TIMEOUT_MS, and any connection silent both ways after IDLE_TIMEOUT_MS. These are
 *   set on the server in buildApp (fastifyServerOptions).
 * - At most MAX_CONNECTIONS open connections, and MAX_CONNECTIONS_PER_ADDRESS from one socket
 *   address (not applied behind a proxy, where every client shares the proxy's address). A
 *   connection over a cap is refused gracefully: its request gets 503 `service_unavailable` with
 *   Retry-After and `Connection: close`, and a connection that sends nothing is closed after 2 s.
 *   Far beyond the cap (a quarter more) sockets are dropped at once, before they cost anything.
 *   That quarter of headroom still serves health, readiness and the operator (RESERVED_PATHS), and
 *   held requests (long-polls, MCP waits) take at most HELD_SHARE of MAX_CONNECTIONS
 *   (services/waiting/task-waits.ts): past it a wait is answered at once with the current status.
 *
 * Long-polls: a route that holds its response open on purpose declares `config: { holdsRequests: true }`.
 * A held long-poll is exempt from the idle timeout (its socket timeout is lifted while it is held);
 * the request timeout only bounds receiving the request, so it never cuts a held response. It
 * still counts against both connection caps, like any open connection.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route may hold a request open while it waits for a change (long-poll, MCP waits): exempt
     * from the idle timeout, counted in the connection caps; the route bounds the hold itself.
     */
    holdsRequests?: boolean;
  }
}

/**
 * What still answers on a connection past MAX_CONNECTIONS (in the quarter of headroom before
 * sockets are dropped): health, readiness and the operator's console and API, so probes and the
 * operator keep working when clients hold every ordinary slot (docs/operations.md#capacity-for-health-and-the-operator-issue-34). Not past the
 * per-address cap: one address cannot use the headroom.
 */
const RESERVED_PATHS = /^\/(?:api\/v1\/health(?:\/ready)?|operator|api\/v1\/admin)(?:[/?]|$)/;

/** Seconds a refused connection is told to wait. */
const RETRY_AFTER_SECONDS = 5;
/** How long a connection over a cap may take to send its request before it is simply closed. */
const OVER_CAP_GRACE_MS = 2000;

/** Fastify's server options for the timeouts (headers must come within the request's time). */
export function serverTimeoutOptions(settings: ServerSettings) {
  return {
    requestTimeout: settings.requestTimeoutMs,
    keepAliveTimeout: settings.keepAliveTimeoutMs,
    connectionTimeout: settings.idleTimeoutMs,
    http: {
      headersTimeout: Math.min(settings.headersTimeoutMs, settings.requestTimeoutMs),
      // Node checks the request and header timeouts on this interval (30 s by default, which
      // would let a stalled request live twice as long as configured).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(settings.requestTimeoutMs / 4))),
    },
  };
}

/**
 * Counts connections on the server and returns the two steps of the request pipeline
 * (pipeline.ts) that act on them: `refuse` answers a connection over a cap, `lift` lifts the idle
 * timeout of a request that is held on purpose; and `isOverCap` for the status read's fast lane.
 */
export function installConnectionLimits(
  app: FastifyInstance,
  settings: ServerSettings,
  perAddress: boolean,
): { refuse: RequestStep; lift: RequestStep; isOverCap: (socket: Socket) => boolean } {
  const server = app.server;
  const byAddress = new Map<string, number>();
  // Sockets over a cap, and whether only the total cap (then reserved paths still answer).
  const overCap = new WeakMap<Socket, 'total' | 'address'>();
  let open = 0;
  server.maxConnections = settings.maxConnections + Math.ceil(settings.maxConnections / 4);
  guardSlowClients(server, settings);

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    open += 1;
    const fromAddress = (byAddress.get(address) ?? 0) + 1;
    byAddress.set(address, fromAddress);
    socket.once('close', () => {
      open -= 1;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left <= 0) byAddress.delete(address);
      else byAddress.set(address, left);
    });
    const overAddress = perAddress && fromAddress > settings.maxConnectionsPerAddress;
    if (overAddress || open > settings.maxConnections) {
      overCap.set(socket, overAddress ? 'address' : 'total');
      socket.setTimeout(OVER_CAP_GRACE_MS, () => socket.destroy());
    }
  });

  const refuse: RequestStep = (request, reply) => {
    const over = overCap.get(request.raw.socket);
    if (over === undefined) return undefined;
    if (over === 'total' && RESERVED_PATHS.test(request.url)) {
      // Served in the headroom; the connection then lives by the ordinary idle timeout.
      request.raw.socket.setTimeout(settings.idleTimeoutMs);
      return undefined;
    }
    reply.header('connection', 'close');
    request.log.warn({ open }, 'connection refused: too many open connections');
    return new AppError(
      'service_unavailable',
      `Too many open connections${perAddress ? ' from this address or in total' : ''}; close idle connections and retry after ${RETRY_AFTER_SECONDS} seconds.`,
      { retry_after_seconds: RETRY_AFTER_SECONDS },
      { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    );
  };

  // A held long-poll is silent by design: lift the idle timeout while it is held. A GET is held
  // only when it asks to wait (Prefer: wait): a plain read keeps its timeout.
  const lift: RequestStep = (request, _reply, route) => {
    if (route.holdsRequests === true && (request.method !== 'GET' || request.headers.prefer !== undefined)) request.raw.socket.setTimeout(0);
    return undefined;
  };
  return { refuse, lift, isOverCap: (socket) => overCap.has(socket) };
}
