import { execFile } from 'node:child_process';
import path from 'node:path';

const TSX = path.resolve('node_modules/.bin/tsx');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one of the src/cli scripts exactly as `npm run` does (tsx), with extra environment. */
export function runCli(
  script: 'verify-receipt' | 'rotate-keys' | 'backup' | 'restore' | 'audit-verify',
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  // Vite puts its own BASE_URL ('/') into the test process's environment; the CLIs must not see it.
  const { BASE_URL: _vite, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(TSX, [`src/cli/${script}.ts`, ...args], { env: { ...inherited, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
