import { loadConfigOrExit } from '../config.js';
import { systemClock } from '../domain/time.js';
import { listKeys, rotateKeys } from '../receipts/keys.js';
import { migrate, openStore } from '../store/db.js';

/**
 * `npm run keys:rotate`: retires the active receipt-signing key and activates a new one, on the
 * configured DATABASE_URL. Retired keys stay in /.well-known/jwks.json, so every receipt issued
 * so far keeps verifying; running instances sign with the new key from their next delivery.
 */
async function main(): Promise<number> {
  const config = loadConfigOrExit();
  const store = openStore(config.databaseUrl, { poolSize: 1 });
  try {
    await migrate(store);
    const { retired, active } = await rotateKeys(store.db, systemClock.now());
    const keys = await listKeys(store.db);
    process.stdout.write(
      [
        retired ? `Retired key ${retired} (still published: receipts it signed keep verifying).` : 'There was no active key.',
        `Active key is now ${active}.`,
        `Published keys (${keys.length}):`,
        ...keys.map((k) => `  ${k.kid}  created ${k.created_at}  ${k.active ? 'active' : `retired ${k.retired_at ?? ''}`}`),
        '',
      ].join('\n'),
    );
    return 0;
  } finally {
    await store.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`Key rotation failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
