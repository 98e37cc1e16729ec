/**
 * A probe in a process of its own, so what it measures is the service and not the load
 * generator's busy event loop: GET <url>, one request at a time, each on a connection of its own or
 * all over one kept-alive connection.
 * It sends one request unmeasured (connection and start-up), prints "ready", then measures until a
 * line arrives on stdin; then prints the latencies (ms, a failed probe or one not answered 200 as
 * -1) as one JSON array and exits.
 *
 * Arguments: <url> [options as JSON: { intervalMs (default 20), headers, keepAlive (default
 * false), localAddress (default 127.0.0.1) }]. Start it through startProbe (bench/probes.ts).
 */
import http from 'node:http';

const url = process.argv[2] ?? '';
const options = JSON.parse(process.argv[3] ?? '{}') as { intervalMs?: number; headers?: Record<string, string>; keepAlive?: boolean; localAddress?: string };
const agent = options.keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : false;
const latencies: number[] = [];
let running = true;
process.stdin.once('data', () => {
  running = false;
});

const once = () =>
  new Promise<number>((resolve) => {
    const started = performance.now();
    const request = http.get(url, { agent, localAddress: options.localAddress ?? '127.0.0.1', headers: options.headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - started : -1));
    });
    request.on('error', () => resolve(-1));
  });

await once();
process.stdout.write('ready\n');
while (running) {
  latencies.push(await once());
  await new Promise((r) => setTimeout(r, options.intervalMs ?? 20));
}
process.stdout.write(`${JSON.stringify(latencies)}\n`);
process.exit(0);
