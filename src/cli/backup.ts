import { existsSync } from 'node:fs';
import { loadConfigOrExit } from '../config.js';
import { backupSqlite, sqliteFileOf } from '../store/sqlite/backup.js';

/**
 * `npm run backup -- <file> [--force]`: a consistent online copy of the SQLite store (the service
 * may keep running). The copy is the whole state: tasks, messages, outbox, and the receipt-signing
 * keys, so receipts keep verifying after a restore. On PostgreSQL it prints the pg_dump command.
 */
async function main(argv: string[]): Promise<number> {
  const force = argv.includes('--force');
  const [target, ...extra] = argv.filter((a) => a !== '--force');
  if (!target || extra.length > 0 || target.startsWith('-')) {
    process.stderr.write('Usage: npm run backup -- <file> [--force]\n');
    return 2;
  }
  const config = loadConfigOrExit();
  const file = sqliteFileOf(config.databaseUrl);
  if (!file) {
    process.stderr.write(
      [
        'DATABASE_URL is PostgreSQL: back it up with pg_dump (consistent while the service runs):',
        `  pg_dump --format=custom --file=${target} "$DATABASE_URL"`,
        'and restore into an empty database with:',
        `  pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" ${target}`,
        '',
      ].join('\n'),
    );
    return 2;
  }
  if (existsSync(target) && !force) {
    process.stderr.write(`${target} exists; pass --force to overwrite it.\n`);
    return 1;
  }
  const pages = await backupSqlite(file, target);
  process.stdout.write(`Backed up ${file} to ${target} (${pages} pages).\nRestore with: npm run restore -- ${target}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`Backup failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
