import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { JSONWebKeySet } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../src/receipts/verify.js';
import { ADMIN, type Json, submit, taskIn } from './operator.support.js';
import { runCli } from './receipts.support.js';
import { startTestApp, type TestApp, useTestApp } from './support/app.js';

const NOTES = 'The bakery is open 8:00–12:00 on Sundays.';

describe('npm run backup / npm run restore (SQLite)', () => {
  const t = useTestApp({ store: 'sqlite' });
  const dir = mkdtempSync(path.join(tmpdir(), 'hts-backup-'));
  let restored: TestApp | undefined;
  afterAll(async () => {
    await restored?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('copies the live store online; the restored copy serves every task and its old receipts still verify', async () => {
    const ids = [await submit(t), await taskIn(t, 'accepted'), await taskIn(t, 'delivered'), await taskIn(t, 'rejected')];
    const deliveredId = ids[2] as string;
    const original = (await (await fetch(`${t.url}/api/v1/tasks/${deliveredId}`)).json()) as Json;

    const file = path.join(dir, 'backup.db');
    const backup = await runCli('backup', [file], { DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' });
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(backup.stdout).toContain(`npm run restore -- ${file}`);
    // The running instance kept serving; this task is after the backup and must not be in it.
    const later = await submit(t);

    const freshDir = path.join(dir, 'fresh');
    const databaseUrl = `sqlite:${path.join(freshDir, 'service.db')}`;
    const restore = await runCli('restore', [file], { DATABASE_URL: databaseUrl, DATA_DIR: freshDir, LOG_LEVEL: 'silent' });
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);

    restored = await startTestApp({ env: { DATABASE_URL: databaseUrl } });
    for (const id of ids) expect((await fetch(`${restored.url}/api/v1/tasks/${id}`)).status).toBe(200);
    expect((await fetch(`${restored.url}/api/v1/tasks/${later}`)).status).toBe(404);
    const queue = (await (await fetch(`${restored.url}/api/v1/admin/tasks?limit=50`, { headers: ADMIN })).json()) as { tasks: Json[] };
    expect(queue.tasks.map((task) => task.task_id).sort()).toEqual([...ids].sort());

    const copy = (await (await fetch(`${restored.url}/api/v1/tasks/${deliveredId}`)).json()) as Json;
    expect(copy).toEqual(original);
    // The signing keys are in the store: the restored instance publishes the key that signed it.
    const jwks = (await (await fetch(`${restored.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
    const verdict = await verifyReceipt(String(copy.receipt), { jwks, expectedTaskId: deliveredId, operatorNotes: NOTES });
    expect(verdict.valid).toBe(true);
  }, 120_000);
});
