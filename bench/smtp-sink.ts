/**
 * A local SMTP sink for the default-path benchmark, in a process of its own (in the load
 * generator's process it would take the event loop the load generator needs): accepts every mail,
 * keeps none, and prints its port, then the number of mails received whenever it changed (at most
 * every 100 ms), one number a line.
 *
 * It answers as the MTAs that deployments relay through do. Postfix's smtpd writes each reply into
 * its stream's buffer (smtpd_chat.c) and sends them when it has to wait for more input, so a
 * pipelined `MAIL FROM`, `RCPT TO`, `DATA` is answered in one segment. smtp-server, the sink
 * before this one, answered each command with a write of its own: three segments, so the
 * service's mail thread woke three times per mail, and the sink itself took ~50 µs a mail of the
 * two cores the benchmark measures (docs/performance.md, "The SMTP sink"). The tests still use
 * smtp-server (test/support/smtp.ts), which covers replies that arrive one at a time.
 *
 * SMTP as RFC 5321 has it for a client that behaves: EHLO or HELO, then transactions (MAIL, RCPT,
 * DATA, the dot-stuffed message up to its `.` line), RSET, NOOP and QUIT; a command out of order
 * gets 503, an unknown one 502. No AUTH, no STARTTLS.
 */
import { createServer, type Socket } from 'node:net';

const END_OF_DATA = '\r\n.\r\n';
/** A command line longer than this is not one: the connection is closed. */
const LINE_MAX = 2048;

let received = 0;
let reported = -1;

function serve(socket: Socket): void {
  socket.setNoDelay(true);
  let greeted = false;
  let sender = false;
  let recipients = 0;
  let inData = false;
  let pending = '';
  socket.on('error', () => undefined);
  socket.write('220 sink.bench.invalid ESMTP\r\n');
  socket.on('data', (chunk: Buffer) => {
    pending += chunk.toString('latin1');
    let replies = '';
    for (;;) {
      if (inData) {
        // The message ends at a line holding only "." (dot-stuffing keeps any other such line
        // out of it); the CRLF that opened DATA's line counts as the first line break.
        const end = pending.indexOf(END_OF_DATA);
        if (end < 0) {
          // Keep what could be the start of the terminator.
          if (pending.length > END_OF_DATA.length) pending = pending.slice(-(END_OF_DATA.length - 1));
          break;
        }
        pending = pending.slice(end + END_OF_DATA.length);
        inData = false;
        sender = false;
        recipients = 0;
        received += 1;
        replies += '250 2.0.0 Ok: queued\r\n';
        continue;
      }
      const lineEnd = pending.indexOf('\r\n');
      if (lineEnd < 0) {
        if (pending.length > LINE_MAX) {
          socket.end('500 5.5.2 Line too long\r\n');
          return;
        }
        break;
      }
      const line = pending.slice(0, lineEnd);
      pending = pending.slice(lineEnd + 2);
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO') {
        greeted = true;
        replies += '250-sink.bench.invalid\r\n250-PIPELINING\r\n250-SIZE 26214400\r\n250 8BITMIME\r\n';
      } else if (verb === 'HELO') {
        greeted = true;
        replies += '250 sink.bench.invalid\r\n';
      } else if (verb === 'MAIL') {
        if (!greeted || sender) replies += '503 5.5.1 Bad sequence of commands\r\n';
        else {
          sender = true;
          replies += '250 2.1.0 Ok\r\n';
        }
      } else if (verb === 'RCPT') {
        if (!sender) replies += '503 5.5.1 Need MAIL first\r\n';
        else {
          recipients += 1;
          replies += '250 2.1.5 Ok\r\n';
        }
      } else if (verb === 'DATA') {
        if (recipients === 0) replies += '503 5.5.1 Need RCPT first\r\n';
        else {
          inData = true;
          pending = `\r\n${pending}`;
          replies += '354 End data with <CR><LF>.<CR><LF>\r\n';
        }
      } else if (verb === 'RSET') {
        sender = false;
        recipients = 0;
        replies += '250 2.0.0 Ok\r\n';
      } else if (verb === 'NOOP') {
        replies += '250 2.0.0 Ok\r\n';
      } else if (verb === 'QUIT') {
        socket.end(`${replies}221 2.0.0 Bye\r\n`);
        return;
      } else {
        replies += '502 5.5.2 Command not recognized\r\n';
      }
    }
    // Every reply to what arrived together, in one write (as Postfix flushes before it reads).
    if (replies !== '') socket.write(replies);
  });
}

const server = createServer(serve);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
  setInterval(() => {
    if (received === reported) return;
    reported = received;
    process.stdout.write(`${received}\n`);
  }, 100);
});
