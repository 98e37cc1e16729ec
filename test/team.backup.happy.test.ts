import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SQLite } from '../src/store/sqlite-driver.js';
import { submit } from './operator.support.js';
import { runCli } from './receipts.support.js';
import { useTestApp } from './support/app.js';
import { api, json, newOperator } from './team.support.js';

describe('npm run backup exports the team and its audit log (SQLite)', () => {
  const t = useTestApp({ store: 'sqlite' });
  const dir = mkdtempSync(path.join(tmpdir(), 'hts-team-backup-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('carries operators, hashed keys and every audit entry into the backup', async () => {
    const op = await newOperator(t);
    const id = await submit(t);
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }, op.auth), 200);
    const file = path.join(dir, 'backup.db');
    const backup = await runCli('backup', [file], { DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' });
    expect(backup.code).toBe(0);
    const copy = new SQLite(file, { readonly: true });
    try {
      const entry = copy.prepare('select actor, action from audit_log where task_id = ?').get(id);
      expect(entry).toEqual({ actor: op.operator_id, action: 'task.accepted' });
      expect(copy.prepare('select id from operators where id = ?').get(op.operator_id)).toBeDefined();
      // Keys travel hashed only.
      const keys = copy.prepare('select key_hash from operator_keys where operator_id = ?').all(op.operator_id) as { key_hash: string }[];
      expect(keys.length).toBe(1);
      expect(JSON.stringify(keys)).not.toContain(op.key);
    } finally {
      copy.close();
    }
  });
});
