import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/db.js';
import { migrations } from '../src/store/migrations/index.js';

/**
 * The upgrade to teams (migration 140) keeps existing deployments working: the first start after
 * it only creates tables (and their indexes); no existing table is altered or rewritten.
 */
describe('upgrading a deployment to teams (SQLite)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'hts-team-upgrade-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the team tables and leaves every existing table as it was', async () => {
    const store = openStore(`sqlite:${path.join(dir, 'service.db')}`, { timeoutMs: 5000 });
    try {
      const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => migrations } });
      // Every migration before 140, then 140 alone: what the team upgrade itself changes.
      const before = await migrator.migrateTo('130_questions_deadlines');
      expect(before.error).toBeUndefined();
      const tables = async () =>
        new Map(
          (await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'table'`.execute(store.db)).rows.map((row) => [
            row.name,
            row.sql,
          ]),
        );
      const old = await tables();
      expect((await migrator.migrateTo('140_team')).error).toBeUndefined();
      const upgraded = await tables();
      for (const [name, definition] of old) expect(upgraded.get(name), name).toBe(definition);
      const added = [...upgraded.keys()].filter((name) => !old.has(name)).sort();
      expect(added).toEqual([
        'audit_log',
        'operator_invites',
        'operator_keys',
        'operator_passkeys',
        'operators',
        'signin_failures',
        'task_assignments',
        'webauthn_challenges',
      ]);
    } finally {
      await store.close();
    }
  });
});
