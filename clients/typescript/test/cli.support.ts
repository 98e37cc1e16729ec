import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Runs htask as a process, exactly as `npx htask` does (the bin script under Node). */

export const HTASK = fileURLToPath(new URL('../bin/htask.mjs', import.meta.url));

export interface HtaskResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface HtaskOptions {
  baseUrl?: string;
  input?: string;
  env?: Record<string, string>;
}

export function htask(args: string[], options: HtaskOptions = {}): Promise<HtaskResult> {
  return startHtask(args, options).done;
}

/** A running htask: `done` when it exits; `stderrContains` resolves once its stderr shows the text. */
export function startHtask(args: string[], options: HtaskOptions = {}): { done: Promise<HtaskResult>; stderrContains(text: string): Promise<void> } {
  // Vite puts its own BASE_URL into the test process's environment; htask must not see it.
  const { BASE_URL: _vite, HTASK_BASE_URL: _mine, ...inherited } = process.env;
  const env: Record<string, string | undefined> = { ...inherited, ...options.env };
  if (options.baseUrl !== undefined) env.HTASK_BASE_URL = options.baseUrl;
  let stdout = '';
  let stderr = '';
  const done = new Promise<HtaskResult>((resolve, reject) => {
    const child = spawn(process.execPath, [HTASK, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
  const stderrContains = async (text: string) => {
    const until = Date.now() + 60_000;
    while (!stderr.includes(text)) {
      if (Date.now() > until) throw new Error(`htask never printed ${text}; stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { done, stderrContains };
}
