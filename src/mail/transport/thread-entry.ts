import { parentPort, workerData } from 'node:worker_threads';
import { composeMail, mailEnvelope, type OutgoingMail } from './mime.js';
import { SmtpPool } from './smtp-client.js';
import type { FromThread, SendFailure, ThreadTransportSpec, ToThread } from './thread-transport.js';

/**
 * The mail thread (mail/transport/thread-transport.ts): composes each mail it is handed and sends it through
 * its own SMTP pool, answering every mail with its outcome. Bundled on its own as
 * dist/mail-thread.mjs (scripts/build.mjs).
 */

const port = parentPort;
if (port === null) throw new Error('mail/transport/thread-entry.ts runs as a worker thread');
const spec = workerData as ThreadTransportSpec;
const pool = new SmtpPool({ ...spec.smtpOptions, url: spec.smtpUrl, poolSize: spec.connections });
let inFlight = 0;
let closing = false;

function failureOf(error: unknown): SendFailure {
  if (typeof error !== 'object' || error === null) return { name: 'Error', message: String(error) };
  const { name, message, code, responseCode, response } = error as Record<string, unknown>;
  return { name: typeof name === 'string' ? name : 'Error', message: typeof message === 'string' ? message : String(error), code, responseCode, response };
}

function finish(): void {
  if (!closing || inFlight > 0) return;
  pool.close();
  port?.close();
}

/** Outcomes of this turn, posted together at its end (thread-transport.ts). */
let outcomes: FromThread['outcomes'] = [];

function answer(outcome: FromThread['outcomes'][number]): void {
  if (outcomes.length === 0) {
    setImmediate(() => {
      const done = outcomes;
      outcomes = [];
      port?.postMessage({ outcomes: done } satisfies FromThread);
      inFlight -= done.length;
      finish();
    });
  }
  outcomes.push(outcome);
}

function send(seq: number, outgoing: OutgoingMail): void {
  // A Buffer crosses the thread boundary as a plain Uint8Array.
  const mail = {
    ...outgoing,
    attachments: outgoing.attachments?.map((a) => ({ ...a, content: Buffer.from(a.content.buffer, a.content.byteOffset, a.content.length) })),
  };
  inFlight += 1;
  let sent: Promise<void>;
  try {
    sent = pool.send(mailEnvelope(mail), composeMail(mail));
  } catch (error) {
    sent = Promise.reject(error);
  }
  sent.then(
    () => answer({ seq }),
    (error: unknown) => answer({ seq, failure: failureOf(error) }),
  );
}

port.on('message', (message: ToThread) => {
  if ('close' in message) {
    closing = true;
    finish();
    return;
  }
  for (const { seq, mail } of message.mails) send(seq, mail);
});
