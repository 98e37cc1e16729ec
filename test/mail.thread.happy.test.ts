import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSmtpSink } from '../bench/default-path.js';
import { type Background, startBackground } from '../src/background.js';
import { isPermanentRejection } from '../src/mail/errors.js';
import type { OutgoingMail } from '../src/mail/transport/mime.js';
import { ThreadTransport } from '../src/mail/transport/thread-transport.js';
import { postJson, STORES, startTestApp, type TestApp, validTask } from './support/app.js';
import { startSmtpServer, type TestSmtpServer, waitUntil } from './support/smtp.js';

/**
 * Issue 28, item 2: mail keeps up with a flood of submissions. SMTP runs on a thread of its own
 * (mail/thread-transport.ts), and a wake from a new mail never puts off the worker's next look
 * (services/scheduler.ts): each wake used to restart a 25 ms delay, so while submissions came
 * faster than that the outbox sent nothing at all until they stopped.
 */

let t: TestApp | undefined;
let smtp: TestSmtpServer | undefined;
let background: Background | undefined;
let transport: ThreadTransport | undefined;
afterEach(async () => {
  transport?.close();
  transport = undefined;
  await background?.stop();
  background = undefined;
  await t?.close();
  t = undefined;
  await smtp?.close();
});

const mail = (n: number, to = 'operator@ops.example-service.dev'): OutgoingMail => ({
  id: `mail-thread-${n}`,
  kind: 'task_submitted',
  from: 'no-reply@hitl.example-service.dev',
  to,
  replyTo: null,
  subject: `Mail ${n} through the thread`,
  text: `Body of mail ${n}.\n`,
  html: null,
  createdAt: '2030-03-10T10:00:00.000Z',
  attachments: [{ filename: 'bytes.bin', contentType: 'application/octet-stream', content: Buffer.from([0, 1, 2, 254, 255, 13, 10, 46]) }],
});

describe.each(STORES)('mail during a flood on %s', (store) => {
  it('goes out while submissions keep coming, not only once they stop', async () => {
    // The bench's SMTP sink, in a process of its own: the suite's SMTP server parses every mail on
    // this process's event loop, which the flood below keeps busy.
    const sink = await startSmtpSink();
    try {
      t = await startTestApp({
        store,
        env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}`, OPERATOR_EMAIL: 'operator@ops.example-service.dev', TRUST_PROXY: '1' },
      });
      background = await startBackground(t.deps);
      const app = t;
      // The thread is up (in a test it compiles its TypeScript first) before the flood starts.
      expect((await postJson(`${app.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '10.9.9.9' })).status).toBe(202);
      await waitUntil(() => sink.received() === 1, 20_000, 'the first mail');
      // Submissions back to back, each from its own address: a new batch (and a wake of the worker)
      // every few milliseconds, never 25 ms apart. The flood stops when ten of its mails have reached
      // the sink, or at 2,000 submissions; mail that waited for the flood to end would hit the cap.
      // No clock decides the outcome, so a slow machine changes only how long it takes.
      const cap = 2000;
      let submitted = 0;
      const flood = Array.from({ length: 4 }, async (_, lane) => {
        while (sink.received() - 1 < 10 && submitted < cap) {
          const n = submitted++;
          const res = await postJson(`${app.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': `10.${lane}.${(n >> 8) & 255}.${n & 255}` });
          expect(res.status).toBe(202);
        }
      });
      await Promise.all(flood);
      expect(sink.received() - 1).toBeGreaterThanOrEqual(10);
      expect(submitted).toBeLessThan(cap);
      await waitUntil(() => sink.received() === submitted + 1, 20_000, 'every mail');
    } finally {
      sink.stop();
    }
  });
});

describe('the mail thread', () => {
  it('carries attachments byte for byte and the fields that tell a permanent rejection', async () => {
    smtp = await startSmtpServer();
    transport = new ThreadTransport({ smtpUrl: smtp.url, connections: 2 });
    await transport.send(mail(1));
    const [received] = await smtp.waitFor(1);
    expect(received?.subject).toBe('Mail 1 through the thread');
    expect(received?.raw.toString('latin1')).toContain(Buffer.from([0, 1, 2, 254, 255, 13, 10, 46]).toString('base64'));
    await smtp.setMode('reject');
    const refusal = await transport.send(mail(2)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toMatchObject({ code: 'EENVELOPE', responseCode: 550 });
    expect(isPermanentRejection(refusal)).toBe(true);
  });

  it('fails the sends it held when it dies, like a lost connection, and the next send starts another', async () => {
    smtp = await startSmtpServer();
    smtp.setDataDelay(2000);
    transport = new ThreadTransport({ smtpUrl: smtp.url, connections: 1 });
    const held = transport.send(mail(3)).then(
      () => undefined,
      (error: unknown) => error,
    );
    // Let the thread start and take the mail, then end it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await transport.terminateThread();
    const lost = await held;
    expect(lost).toMatchObject({ code: 'ECONNECTION' });
    expect(isPermanentRejection(lost)).toBe(false);
    smtp.setDataDelay(0);
    await transport.send(mail(4));
    expect((await smtp.waitFor(1, (m) => m.subject === 'Mail 4 through the thread'))[0]).toBeDefined();
  });

  it('hands the mails of one turn over in one message and settles each with its own outcome', async () => {
    smtp = await startSmtpServer();
    transport = new ThreadTransport({ smtpUrl: smtp.url, connections: 2 });
    await transport.send(mail(10));
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => transport?.send(mail(11 + i))));
      expect(posted).toHaveBeenCalledTimes(1);
    } finally {
      posted.mockRestore();
    }
    const subjects = (await smtp.waitFor(21)).map((m) => m.subject);
    for (let n = 10; n <= 30; n++) expect(subjects).toContain(`Mail ${n} through the thread`);
  });

  it('sends a mail handed over in the same turn as the close', async () => {
    smtp = await startSmtpServer();
    transport = new ThreadTransport({ smtpUrl: smtp.url, connections: 1 });
    await transport.send(mail(31));
    const sending = transport.send(mail(32));
    transport.close();
    await sending;
    expect((await smtp.waitFor(2)).map((m) => m.subject)).toContain('Mail 32 through the thread');
  });

  it('lets the sends under way finish when closed, and refuses new ones', async () => {
    smtp = await startSmtpServer();
    smtp.setDataDelay(300);
    transport = new ThreadTransport({ smtpUrl: smtp.url, connections: 1 });
    const sending = transport.send(mail(5));
    await new Promise((resolve) => setTimeout(resolve, 100));
    transport.close();
    await sending;
    expect((await smtp.waitFor(1))[0]?.subject).toBe('Mail 5 through the thread');
    await expect(transport.send(mail(6))).rejects.toMatchObject({ code: 'ECONNECTION' });
  });
});
