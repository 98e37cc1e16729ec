import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from '../bench/default-path.js';
import { composeMail, mailEnvelope } from '../src/mail/transport/mime.js';
import { SmtpPool } from '../src/mail/transport/smtp-client.js';
import { outgoingMail } from './mail.smtp-client.support.js';

/**
 * The default-path benchmark's SMTP sink (bench/smtp-sink.ts) stands in for the MTA a deployment
 * relays through: it must count every message the service's SMTP client sends, wherever a chunk
 * ends, and answer a pipelined group in one write, as Postfix does (smtp-server, the sink before,
 * wrote a segment per reply and woke the mail thread three times a message).
 */
describe("the benchmark's SMTP sink", () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(() => sink.stop());

  const until = async (count: number) => {
    for (let i = 0; i < 100 && sink.received() < count; i++) await new Promise((r) => setTimeout(r, 50));
    return sink.received();
  };

  it('counts every message the SMTP client sends, dot-stuffed lines and a 1 MB one included', async () => {
    const pool = new SmtpPool({ url: `smtp://127.0.0.1:${sink.port}`, poolSize: 3 });
    const before = sink.received();
    const mails = [
      outgoingMail({ text: '.\n..leading dots\n.\nthe end' }),
      outgoingMail({ text: 'x'.repeat(70).concat('\n').repeat(15_000) }),
      ...Array.from({ length: 20 }, () => outgoingMail()),
    ];
    await Promise.all(mails.map((m) => pool.send(mailEnvelope(m), composeMail(m))));
    pool.close();
    expect(await until(before + mails.length)).toBe(before + mails.length);
  });

  it('answers a pipelined MAIL FROM, RCPT TO and DATA, refuses commands out of order, and finds a terminator split across writes', async () => {
    // Whether the three replies went in one write cannot be seen from here (the reader may join
    // writes or split one); docs/performance.md shows it by its cost.
    const socket = connect(sink.port, '127.0.0.1');
    let input = '';
    let waiting: (() => void) | undefined;
    socket.on('data', (data) => {
      input += String(data);
      waiting?.();
    });
    /** The next `count` complete replies (single-line ones, or the last line of a multi-line one). */
    const replies = (count: number) =>
      new Promise<string[]>((resolve) => {
        const take = () => {
          const lines = input.split('\r\n');
          const ends = lines.slice(0, -1).filter((line) => line.charAt(3) !== '-');
          if (ends.length < count) {
            waiting = take;
            return;
          }
          waiting = undefined;
          input = '';
          resolve(ends);
        };
        take();
      });
    expect((await replies(1))[0]).toMatch(/^220 /);
    socket.write('MAIL FROM:<a@example.test>\r\n');
    expect((await replies(1))[0]).toMatch(/^503 /);
    socket.write('EHLO client.example.test\r\n');
    expect(await replies(1)).toEqual(['250 8BITMIME']);
    socket.write('MAIL FROM:<a@example.test>\r\nRCPT TO:<b@example.test>\r\nDATA\r\n');
    expect((await replies(3)).map((line) => line.slice(0, 3))).toEqual(['250', '250', '354']);
    const before = sink.received();
    socket.write('Subject: split\r\n\r\nbody\r\n.');
    await new Promise((r) => setTimeout(r, 50));
    socket.write('\r\n');
    expect((await replies(1))[0]).toMatch(/^250 /);
    socket.write('DATA\r\n');
    expect((await replies(1))[0]).toMatch(/^503 /);
    socket.write('QUIT\r\n');
    expect((await replies(1))[0]).toMatch(/^221 /);
    socket.destroy();
    expect(await until(before + 1)).toBe(before + 1);
  });
});
