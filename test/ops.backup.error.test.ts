import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './receipts.support.js';
import { useTestApp } from './support/app.js';

describe('backup and restore refusals', () => {
  const t = useTestApp({ store: 'sqlite' });
  const dir = mkdtempSync(path.join(tmpdir(), 'hts-backup-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = () => ({ DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' });

  it('prints usage without a file (exit 2)', async () => {
    for (const script of ['backup', 'restore'] as const) {
      const result = await runCli(script, [], env());
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`Usage: npm run ${script} -- <file>`);
    }
  }, 120_000);

  it('refuses to overwrite an existing backup file or the store without --force', async () => {
    const file = path.join(dir, 'b.db');
    expect((await runCli('backup', [file], env())).code).toBe(0);
    const again = await runCli('backup', [file], env());
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('pass --force');
    expect((await runCli('backup', [file, '--force'], env())).code).toBe(0);

    const refused = await runCli('restore', [file], env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('A store already exists');
    expect(refused.stderr).toContain('Stop the service');
  }, 120_000);

  it('refuses a file that is not a backup of this service', async () => {
    const junk = path.join(dir, 'junk.db');
    writeFileSync(junk, 'not a database');
    const fresh = path.join(dir, 'fresh');
    const result = await runCli('restore', [junk], { DATABASE_URL: `sqlite:${path.join(fresh, 'service.db')}`, DATA_DIR: fresh, LOG_LEVEL: 'silent' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not a backup of this service');
  }, 120_000);

  it('on PostgreSQL, says how to use pg_dump and pg_restore instead', async () => {
    const pgEnv = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/nowhere', DATA_DIR: dir, LOG_LEVEL: 'silent' };
    const backup = await runCli('backup', ['dump.pgc'], pgEnv);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain('pg_dump --format=custom --file=dump.pgc "$DATABASE_URL"');
    const restore = await runCli('restore', ['dump.pgc'], pgEnv);
    expect(restore.code).toBe(2);
    expect(restore.stderr).toContain('pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" dump.pgc');
  }, 120_000);
});
