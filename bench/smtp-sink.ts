/**
 * A local SMTP sink for the default-path benchmark, in a process of its own (in the load
 * generator's process it would take the event loop the load generator needs): accepts every mail,
 * keeps none, and prints its port, then the number of mails received whenever it changed (at most
 * every 100 ms), one number a line.
 */
import { SMTPServer } from 'smtp-server';

let received = 0;
let reported = -1;
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      received += 1;
      callback();
    });
  },
});
server.listen(0, '127.0.0.1', () => {
  const address = server.server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
  setInterval(() => {
    if (received === reported) return;
    reported = received;
    process.stdout.write(`${received}\n`);
  }, 100);
});
