import { buildApp } from './app.js';
import { startBackground } from './background.js';
import { loadConfigOrExit } from './config.js';
import { initDeps } from './deps.js';
import { systemClock } from './domain/time.js';
import { createLogger, readableStream } from './logger.js';
import { forgetGeneratedAdminKey } from './services/team/admin-key.js';
import { migrate, openStore } from './store/db.js';
import { SERVICE_VERSION } from './version.js';

/** Entry point: config → store → migrations → app → listen; drains and closes on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  // The development profile writes one readable line per record instead of JSON.
  const log = createLogger(config.logLevel, config.dev.enabled ? readableStream() : undefined);
  const store = openStore(config.databaseUrl, { timeoutMs: config.storeTimeoutMs });
  await migrate(store);
  const deps = await initDeps(config, store, { clock: systemClock, log, version: SERVICE_VERSION });
  const generatedKey = deps.generatedAdminKey;
  let app;
  try {
    app = await buildApp(deps);
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // Nobody saw the generated key: forget it, so the next start generates and prints one.
    if (generatedKey !== undefined) await forgetGeneratedAdminKey(store.db, generatedKey).catch(() => undefined);
    throw error;
  }
  if (generatedKey !== undefined) {
    // Printed plainly whatever LOG_LEVEL is: this is the only time anyone can see it.
    process.stderr.write(`\nGenerated the operator key (shown only this once; keep it, or set ADMIN_KEY):\n\n  ${generatedKey}\n\n`);
  }
  const background = await startBackground(deps);
  // One plain line a newcomer can read among the JSON log lines: where everything is.
  const base = config.baseUrl.replace(/\/+$/, '');
  process.stderr.write(`Ready: console ${base}/operator · API ${base}/api/v1 · MCP ${base}/mcp · documents ${base}/llms.txt and ${base}/openapi.json\n`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: draining requests');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    // Held reads (long-polls) are answered "unchanged" at once rather than cut off.
    deps.waits.close();
    try {
      await background.stop();
      await app.close();
      await store.close();
      log.info('stopped');
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
