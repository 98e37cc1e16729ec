import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadConfigOrExit } from '../config.js';
import { isServiceBackup, restoreSqlite, sqliteFileOf } from '../store/sqlite/backup.js';

/**
 * `npm run restore -- <file> [--force]`: puts a backup made by `npm run backup` in place of the
 * configured SQLite store. Stop the service first: with a store already there it refuses unless
 * --force is given. On PostgreSQL it prints the pg_restore command.
 */
async function main(argv: string[]): Promise<number> {
  const force = argv.includes('--force');
  const [source, ...extra] = argv.filter((a) => a !== '--force');
  if (!source || extra.length > 0 || source.startsWith('-')) {
    process.stderr.write('Usage: npm run restore -- <file> [--force]\n');
    return 2;
  }
  const config = loadConfigOrExit();
  const file = sqliteFileOf(config.databaseUrl);
  if (!file) {
    process.stderr.write(
      `DATABASE_URL is PostgreSQL: restore a pg_dump backup with\n  pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" ${source}\n`,
    );
    return 2;
  }
  if (!isServiceBackup(source)) {
    process.stderr.write(`${source} is not a backup of this service (not a SQLite database with its tables).\n`);
    return 1;
  }
  if (existsSync(file) && !force) {
    process.stderr.write(`A store already exists at ${file}. Stop the service, then pass --force to replace it with ${source}.\n`);
    return 1;
  }
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const pages = await restoreSqlite(source, file);
  process.stdout.write(`Restored ${source} to ${file} (${pages} pages). Start the service; migrations bring it up to date.\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`Restore failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
