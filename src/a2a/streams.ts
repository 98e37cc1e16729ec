import type { FastifyReply } from 'fastify';
import type { StreamItem } from '../services/a2a/follow.js';
import type { A2AStreamResponse } from '../services/a2a/mapping.js';

/**
 * Server-sent events of the two streaming methods (A2A 1.0 §9.4.2, §11.7): one `data:` line of
 * JSON per StreamResponse (JSON-RPC wraps each in a response object), an SSE comment as the
 * heartbeat, and the stream ends when the task reaches a final or interrupted state. An error
 * after the stream started is its last event.
 */

export interface StreamEnvelope {
  /** What one event's `data` carries. */
  event: (event: A2AStreamResponse) => unknown;
  /** The last event when the stream fails: its `data`, and the SSE event name if any. */
  error: (error: unknown) => { event?: string; data: unknown };
}

/** Headers set on the reply before it is taken over (CORS, request id, rate-limit policy) must survive hijack(). */
function carryHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && !reply.raw.hasHeader(name)) reply.raw.setHeader(name, value);
  }
}

export async function writeStream(reply: FastifyReply, stream: AsyncGenerator<StreamItem>, envelope: StreamEnvelope): Promise<void> {
  carryHeaders(reply);
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  // The first bytes at once, so the client sees the stream open before the first change.
  raw.flushHeaders();
  try {
    for await (const item of stream) {
      if (raw.destroyed) break;
      raw.write('event' in item ? `data: ${JSON.stringify(envelope.event(item.event))}\n\n` : ': keep-alive\n\n');
    }
  } catch (error) {
    if (!raw.destroyed) {
      const last = envelope.error(error);
      raw.write(`${last.event ? `event: ${last.event}\n` : ''}data: ${JSON.stringify(last.data)}\n\n`);
    }
  } finally {
    await stream.return(undefined);
    if (!raw.destroyed) raw.end();
  }
}
