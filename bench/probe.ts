/**
 * A health probe in a process of its own, so what it measures is the service and not the load
 * generator's busy event loop: GET <url> from 127.0.0.1, one at a time, every 20 ms, until a line
 * arrives on stdin; then prints the latencies (ms, a failed probe as -1) as one JSON array and exits.
 */
import http from 'node:http';

const url = process.argv[2] ?? '';
const latencies: number[] = [];
let running = true;
process.stdin.once('data', () => {
  running = false;
});

const once = () =>
  new Promise<number>((resolve) => {
    const started = performance.now();
    const request = http.get(url, { agent: false, localAddress: '127.0.0.1' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - started : -1));
    });
    request.on('error', () => resolve(-1));
  });

while (running) {
  latencies.push(await once());
  await new Promise((r) => setTimeout(r, 20));
}
process.stdout.write(`${JSON.stringify(latencies)}\n`);
process.exit(0);
