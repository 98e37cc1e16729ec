import { Worker } from 'node:worker_threads';
import type { OutgoingMail } from './mime.js';
import type { SmtpPoolOptions } from './smtp-client.js';

/**
 * The SMTP transport on a thread of its own: composing a message and speaking SMTP run in a worker
 * thread (mail/transport/thread-entry.ts) with its own event loop, while the outbox worker (claims, the cap,
 * the marks: all the store work) stays on the service's thread with its one connection.
 *
 * Why: under a flood of submissions the service's event loop turns every ~15 ms, and each SMTP
 * reply waited for a turn, so four connections sent ~120 mails a second while 2,000 tasks a second
 * came in (measured: the outbox sent nothing else until the flood ended). On its own loop a
 * connection sends thousands a second; the service's thread only posts each mail and hears back,
 * and the other core does the SMTP work.
 *
 * The thread starts with the first mail (an instance that sends none never starts it) and is
 * started again by the next mail if it ever dies; the sends it held fail like a lost connection
 * (the outbox worker retries them).
 */

/** What the thread needs to build the real transport: plain data, copied to it. */
export interface ThreadTransportSpec {
  smtpUrl: string;
  connections: number;
  smtpOptions?: Partial<SmtpPoolOptions> | undefined;
}

/** The fields mail/errors.ts reads, carried across the thread boundary. */
export interface SendFailure {
  name: string;
  message: string;
  code?: unknown;
  responseCode?: unknown;
  response?: unknown;
}

/**
 * Mails go over, and their outcomes come back, in batches: those handed over in one turn of the
 * sending loop travel in one message (a message each cost ~2 % of the service's event loop during
 * a flood, docs/performance.md).
 */
export type ToThread = { mails: { seq: number; mail: OutgoingMail }[] } | { close: true };
export type FromThread = { outcomes: { seq: number; failure?: SendFailure }[] };

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** The Worker running thread-entry: beside the bundle (dist/mail-thread.mjs), or the TypeScript source through tsx (tests, tsx). */
function startWorker(spec: ThreadTransportSpec): Worker {
  const here = import.meta.url;
  // It copies nothing it does not need: a Worker inherits process.env by default (SMTP_URL, keys…).
  const options = { workerData: spec, env: {} };
  if (!here.endsWith('.ts')) return new Worker(new URL('./mail-thread.mjs', here), options);
  const entry = new URL('./thread-entry.ts', here).href;
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`, { ...options, eval: true });
}

/** An Error with the fields the outbox reads (code, responseCode, response). */
export function failureError(failure: SendFailure): Error {
  const error = new Error(failure.message);
  error.name = failure.name;
  return Object.assign(error, { code: failure.code, responseCode: failure.responseCode, response: failure.response });
}

export class ThreadTransport {
  readonly name = 'smtp' as const;
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private closed = false;
  /** Mails handed over this turn, posted together at its end. */
  private outgoing: { seq: number; mail: OutgoingMail }[] = [];

  constructor(private readonly spec: ThreadTransportSpec) {}

  send(mail: OutgoingMail): Promise<void> {
    if (this.closed) return Promise.reject(failureError({ name: 'SmtpError', message: 'The mail transport is closed', code: 'ECONNECTION' }));
    this.thread(); // started (or started again) now; post() hands the turn's mails to it
    const seq = ++this.seq;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      if (this.outgoing.length === 0) setImmediate(() => this.post());
      this.outgoing.push({ seq, mail });
    });
  }

  private post(): void {
    const mails = this.outgoing;
    this.outgoing = [];
    // Empty when the thread was lost meanwhile: its loss failed them (and a new thread gets its own).
    if (mails.length > 0) this.worker?.postMessage({ mails } satisfies ToThread);
  }

  /** Ends the thread at once, as a crash would (tests): the sends it holds fail, the next send starts another. */
  async terminateThread(): Promise<void> {
    await this.worker?.terminate();
  }

  /** Lets the thread finish the sends it holds, say QUIT and end. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.post();
    this.worker?.postMessage({ close: true } satisfies ToThread);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(this.spec);
    // The service's exit never waits for it: stopping the outbox worker closes it first.
    worker.unref();
    worker.on('message', (message: FromThread) => {
      for (const { seq, failure } of message.outcomes) {
        const waiting = this.pending.get(seq);
        if (!waiting) continue;
        this.pending.delete(seq);
        if (failure) waiting.reject(failureError(failure));
        else waiting.resolve();
      }
    });
    const lost = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.outgoing = [];
      for (const [seq, waiting] of this.pending) {
        this.pending.delete(seq);
        waiting.reject(failureError({ name: 'SmtpError', message: `The mail thread stopped: ${reason}`, code: 'ECONNECTION' }));
      }
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }
}
