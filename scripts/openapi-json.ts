import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { initDeps } from '../src/deps.js';
import { systemClock } from '../src/domain/time.js';
import { createLogger } from '../src/logger.js';
import { migrate, openStore } from '../src/store/db.js';
import { SERVICE_VERSION } from '../src/version.js';

/**
 * `npx tsx scripts/openapi-json.ts > openapi.json`: the service's OpenAPI document without a
 * running server. Builds the app as src/server.ts does, on a throwaway SQLite data directory, and
 * asks it for /openapi.json. clients/python/scripts/gen_models.py runs it to regenerate the
 * Python models after an API change.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-openapi-'));
try {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const store = openStore(config.databaseUrl);
  await migrate(store);
  const deps = await initDeps(config, store, { clock: systemClock, log: createLogger(config.logLevel), version: SERVICE_VERSION });
  const app = await buildApp(deps);
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`/openapi.json answered ${response.statusCode}`);
  process.stdout.write(`${response.body}\n`);
  await app.close();
  await store.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
