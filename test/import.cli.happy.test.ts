import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deliveredRecord, openRecord, rejectedRecord } from './import.support.js';
import { STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';

const TSX = path.resolve('node_modules/.bin/tsx');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run import -- …` as a process (tsx), with stdin when given. */
function runImport(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  // Vite puts its own BASE_URL ('/') into the test process's environment; the CLI must not see it.
  const { BASE_URL: _vite, ADMIN_KEY: _key, ...inherited } = process.env;
  return new Promise((resolve) => {
    const child = execFile(TSX, ['src/cli/import.ts', ...args], { env: { ...inherited, ...env }, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
    child.stdin?.end(stdin ?? '');
  });
}

describe.each(STORES)('npm run import on %s', (store) => {
  const t = useTestApp({ store });

  it('posts a file in batches with progress and a summary; a second run skips everything; bad records exit 1', async () => {
    const records = [deliveredRecord(), rejectedRecord(), openRecord('under_review'), openRecord('in_progress'), openRecord('accepted')];
    const file = path.join(t.dataDir, 'export.json');
    writeFileSync(file, JSON.stringify({ tasks: records }));
    const first = await runImport([file, '--base-url', t.url, '--batch', '2'], { ADMIN_KEY: TEST_ADMIN_KEY });
    expect(first.stderr).toContain('2/5 records sent');
    expect(first.stderr).toContain('5/5 records sent');
    expect(first.stdout).toContain('Imported 5, skipped 0 (already there), refused 0 of 5 records.');
    expect(first.code).toBe(0);
    expect((await fetch(`${t.url}/api/v1/tasks/${String(records[0]?.task_id)}`)).status).toBe(200);

    const again = await runImport(['-', '--base-url', t.url], { ADMIN_KEY: TEST_ADMIN_KEY }, JSON.stringify(records));
    expect(again.stdout).toContain('Imported 0, skipped 5');
    expect(again.code).toBe(0);

    const bad = openRecord('submitted', { status: 'paused' });
    const mixed = await runImport(['-', '--base-url', t.url], { ADMIN_KEY: TEST_ADMIN_KEY }, JSON.stringify([bad, openRecord('submitted')]));
    expect(mixed.stdout).toContain('Imported 1, skipped 0 (already there), refused 1 of 2 records.');
    expect(mixed.stdout).toContain(`record 0 (${String(bad.task_id)}): status must be one of`);
    expect(mixed.code).toBe(1);
  }, 120_000);

  it('fails clearly without a key, with a wrong key, on a file that is not JSON, and on a usage error', async () => {
    const noKey = await runImport(['-', '--base-url', t.url], {}, '[]');
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('ADMIN_KEY');
    const wrong = await runImport(['-', '--base-url', t.url], { ADMIN_KEY: 'not-the-admin-key-0000' }, JSON.stringify([openRecord()]));
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('401');
    const notJson = await runImport(['-', '--base-url', t.url], { ADMIN_KEY: TEST_ADMIN_KEY }, '{nope');
    expect(notJson.code).toBe(3);
    expect(notJson.stderr).toContain('not valid JSON');
    const usage = await runImport([], { ADMIN_KEY: TEST_ADMIN_KEY });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Usage');
  }, 120_000);
});
