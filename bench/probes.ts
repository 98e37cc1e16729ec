/** Starts bench/probe.ts in a process of its own (see there); stop() resolves with its latencies. */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface ProbeOptions {
  /** Pause between one answer and the next request (default 20 ms). */
  intervalMs?: number;
  headers?: Record<string, string>;
  /** One kept-alive connection for every request, as a polling client keeps it (default: a connection each). */
  keepAlive?: boolean;
}

export interface Probe {
  /** Ends the probe; its latencies in ms, a failed probe as +Infinity. */
  stop(): Promise<number[]>;
}

/** Resolves once the probe has started and sent its unmeasured first request. */
export async function startProbe(url: string, options: ProbeOptions = {}): Promise<Probe> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/probe.ts'), url, JSON.stringify(options)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (data: Buffer) => {
      output += String(data);
      if (output.startsWith('ready\n')) resolve();
    });
    void exited.then(() => reject(new Error('the probe exited before it was ready')));
  });
  return {
    async stop() {
      child.stdin?.write('stop\n');
      await exited;
      return (JSON.parse(output.slice('ready\n'.length).trim() || '[]') as number[]).map((ms) => (ms < 0 ? Number.POSITIVE_INFINITY : ms));
    },
  };
}
