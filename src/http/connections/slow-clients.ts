import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServerSettings } from '../../config.js';
import { answerRequestTimeout } from '../framework-errors.js';

/**
 * Clients too slow to send or to read, bounded by the service itself (connections.ts installs
 * this; Node's own timeouts did not hold either, docs/operations.md#slow-clients-and-connection-floods-srchttpconnectionsconnectionsts):
 *
 * - A request that announces a body must have all of it within REQUEST_TIMEOUT_MS of its headers:
 *   otherwise 408 and the connection closed.
 * - A connection whose output has not moved for IDLE_TIMEOUT_MS while answers wait to be sent (a
 *   client that pipelines requests and never reads) is closed: 20 such sockets held about 77 MB of
 *   send queues for minutes. A held long-poll or stream that writes nothing has nothing waiting,
 *   so it is not affected.
 * - At most MAX_PIPELINED requests of one connection may wait for their answers; past that the
 *   connection is closed (no real client pipelines that deep; a flood of them buys nothing).
 */

/** Requests of one connection that may be waiting for their answers at once. */
export const MAX_PIPELINED = 16;

interface Output {
  /** Requests received and not yet answered. */
  pending: number;
  /** Bytes the kernel has taken, at the last sweep that saw them move. */
  sent: number;
  /** When output was last seen waiting without moving (undefined: nothing waiting). */
  stalledSince: number | undefined;
}

export function guardSlowClients(server: Server, settings: Pick<ServerSettings, 'requestTimeoutMs' | 'idleTimeoutMs'>): void {
  const outputs = new Map<Socket, Output>();
  server.on('connection', (socket: Socket) => {
    outputs.set(socket, { pending: 0, sent: 0, stalledSince: undefined });
    socket.once('close', () => outputs.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const output = outputs.get(request.socket);
    if (output !== undefined) {
      output.pending += 1;
      response.once('close', () => {
        output.pending -= 1;
      });
      if (output.pending > MAX_PIPELINED) {
        request.socket.destroy();
        return;
      }
    }
    boundBody(request, response, settings.requestTimeoutMs);
  });
  // One sweep over the open connections, a few times per IDLE_TIMEOUT_MS: O(connections), off
  // the request path.
  const sweep = setInterval(() => closeStalled(outputs, settings.idleTimeoutMs, Date.now()), sweepInterval(settings.idleTimeoutMs));
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
}

function sweepInterval(idleTimeoutMs: number): number {
  return Math.max(50, Math.min(1000, Math.floor(idleTimeoutMs / 4)));
}

function closeStalled(outputs: Map<Socket, Output>, idleTimeoutMs: number, now: number): void {
  for (const [socket, output] of outputs) {
    const waiting = socket.writableLength;
    if (waiting === 0) {
      output.stalledSince = undefined;
      continue;
    }
    // bytesWritten counts what is queued too; what the kernel took is the rest.
    const sent = socket.bytesWritten - waiting;
    if (output.stalledSince === undefined || sent !== output.sent) {
      output.sent = sent;
      output.stalledSince = now;
    } else if (now - output.stalledSince >= idleTimeoutMs) {
      socket.destroy();
    }
  }
}

/**
 * A request that announces a body (Content-Length above 0, or chunked) must have received all of
 * it within `timeoutMs` of its headers; otherwise it is answered 408 (or, if an answer was already
 * sent, simply cut) and its connection closed. Requests without a body cost nothing here.
 */
function boundBody(request: IncomingMessage, response: ServerResponse, timeoutMs: number): void {
  const length = request.headers['content-length'];
  if ((length === undefined || length === '0') && request.headers['transfer-encoding'] === undefined) return;
  const socket = request.socket;
  const timer = setTimeout(() => {
    if (request.complete || socket.destroyed) return;
    if (response.headersSent) socket.destroy();
    else answerRequestTimeout(socket);
  }, timeoutMs);
  timer.unref();
  // Answered with its body complete: nothing left to bound. (A response sent before the body
  // arrived, such as a 413, leaves the timer to close a connection whose body never comes.)
  response.once('close', () => {
    if (request.complete) clearTimeout(timer);
  });
}
