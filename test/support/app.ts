import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type Background, startBackground } from '../../src/background.js';
import { type Config, loadConfig } from '../../src/config.js';
import { type AppDeps, initDeps } from '../../src/deps.js';
import type { ApiVersion } from '../../src/docs/versions.js';
import type { Clock } from '../../src/domain/time.js';
import { createLogger } from '../../src/logger.js';
import { migrate, openStore, type Store, type StoreOptions } from '../../src/store/db.js';
import { updateTask } from '../../src/store/tasks/tasks-repo.js';
import { SERVICE_VERSION } from '../../src/version.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { sharedDnsServer } from './dns-server.js';
import { startSmtpServer, type TestSmtpServer } from './smtp.js';

/** The stores a suite runs on: SQLite always, PostgreSQL when TEST_POSTGRES_URL is set. */
export const STORES: ('sqlite' | 'postgres')[] = process.env.TEST_POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** The admin key every test app is started with. */
export const TEST_ADMIN_KEY = 'test-admin-key-0123456789';

/** A clock tests can move. */
export class TestClock implements Clock {
  private current: Date;
  constructor(start: string | Date = '2030-03-10T10:00:00.000Z') {
    this.current = new Date(start);
  }
  now(): Date {
    return new Date(this.current);
  }
  set(value: string | Date): void {
    this.current = new Date(value);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export interface TestApp {
  app: FastifyInstance;
  deps: AppDeps;
  config: Config;
  store: Store;
  clock: Clock;
  /** http://127.0.0.1:<port> of the listening server. */
  url: string;
  dataDir: string;
  background?: Background | undefined;
  close(): Promise<void>;
}

export interface TestAppOptions {
  store?: 'sqlite' | 'postgres';
  env?: Record<string, string>;
  clock?: Clock;
  /** Start the outbox worker and other background work. */
  background?: boolean;
  /** Share another test app's database (two instances on one store). */
  shareDatabaseWith?: TestApp;
  /**
   * 'relaxed' (default) lifts the per-client limits and caps so suites that are not about abuse
   * control can submit freely from one address; 'production' keeps the real defaults.
   */
  limits?: 'relaxed' | 'production';
  /** API versions served beside v1 (built into the app's version registry). */
  apiVersions?: ApiVersion[];
  /** Where the app's log lines go (at env LOG_LEVEL); stdout when not given. */
  logTo?: DestinationStream;
  /** Told of every statement the store runs through Kysely (StoreOptions.onQuery). */
  onQuery?: StoreOptions['onQuery'];
}

/** Limits lifted for suites that are not testing them. */
export const RELAXED_LIMITS: Record<string, string> = {
  TASK_LIMIT_PER_HOUR: '100000',
  TASK_LIMIT_PER_DAY: '100000',
  MESSAGE_LIMIT_PER_HOUR: '100000',
  MESSAGE_LIMIT_PER_DAY: '100000',
  STATUS_POLL_LIMIT_PER_DAY: '100000',
  VERIFIED_TASK_LIMIT_PER_HOUR: '100000',
  VERIFIED_TASK_LIMIT_PER_DAY: '100000',
  VERIFIED_MESSAGE_LIMIT_PER_HOUR: '100000',
  VERIFIED_MESSAGE_LIMIT_PER_DAY: '100000',
  VERIFIED_STATUS_POLL_LIMIT_PER_DAY: '100000',
  READ_LIMIT_PER_MINUTE: '1000000',
  DAILY_TASK_CAP: '1000000',
  DAILY_EMAIL_CAP: '1000000',
  AUTO_BLOCK_REFUSALS: '1000000',
  EMAIL_LOOKUP_LIMIT_PER_MINUTE: '1000000',
  ADMIN_FAILURES_PER_MINUTE: '1000000',
  ADMIN_FAILURES_GLOBAL_PER_MINUTE: '1000000',
};

/**
 * Starts the real application exactly as production does (config → store → migrations → deps →
 * buildApp → listen) on a fresh data directory and, for PostgreSQL, a fresh database.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const shared = options.shareDatabaseWith;
  const dataDir = shared?.dataDir ?? mkdtempSync(path.join(tmpdir(), 'hts-test-'));
  let database: TestDatabase | undefined;
  let databaseUrl: string;
  if (shared) {
    databaseUrl = shared.config.databaseUrl;
  } else if ((options.store ?? 'sqlite') === 'postgres') {
    database = await createTestDatabase();
    databaseUrl = database.url;
  } else {
    databaseUrl = `sqlite:${path.join(dataDir, 'service.db')}`;
  }
  // Every test app resolves through the local DNS server (test/support/dns-server.ts) unless a test
  // overrides DNS_SERVERS, so no suite touches the real network.
  const dns = await sharedDnsServer();
  const config = loadConfig({
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '500',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ADMIN_KEY: TEST_ADMIN_KEY,
    // Console actions apply at once in tests unless a test turns undo on (test/inbox.undo.*).
    CONSOLE_UNDO_SECONDS: '0',
    ...((options.limits ?? 'relaxed') === 'relaxed' ? RELAXED_LIMITS : {}),
    ...options.env,
  });
  const store = openStore(config.databaseUrl, { timeoutMs: config.storeTimeoutMs, ...(options.onQuery ? { onQuery: options.onQuery } : {}) });
  await migrate(store);
  const clock = options.clock ?? shared?.clock ?? new TestClock();
  const deps = await initDeps(config, store, {
    clock,
    log: createLogger(config.logLevel, options.logTo),
    version: SERVICE_VERSION,
    apiVersions: options.apiVersions ?? [],
  });
  const app = await buildApp(deps);
  await app.listen({ port: config.port, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const background = options.background ? await startBackground(deps) : undefined;
  return {
    app,
    deps,
    config,
    store,
    clock,
    url,
    dataDir,
    background,
    async close() {
      await background?.stop();
      await app.close();
      await store.close();
      await database?.drop();
      if (!shared) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface UseTestAppOptions extends TestAppOptions {
  /** Also start a real SMTP server (test/support/smtp.ts) and point SMTP_URL at it. */
  smtp?: boolean;
}

/** The app a suite gets from useTestApp: the started TestApp, plus its SMTP server when asked for. */
export type SuiteApp = TestApp & { readonly smtp: TestSmtpServer };

/**
 * The one set-up every suite uses: registers beforeAll/afterAll that start the real app (and an
 * SMTP server when `smtp: true`) and close them. The handle reads through to the started app, so
 * tests write `t.url`, `t.deps`, `t.close()` as with startTestApp. Options may be a function,
 * evaluated in beforeAll, when they depend on something another hook starts.
 */
export function useTestApp(options: UseTestAppOptions | (() => UseTestAppOptions) = {}): SuiteApp {
  let smtp: TestSmtpServer | undefined;
  const app = useSuiteResource<TestApp>(
    async () => {
      const { smtp: wantsSmtp, ...resolved } = typeof options === 'function' ? options() : options;
      if (wantsSmtp) smtp = await startSmtpServer();
      return startTestApp({ ...resolved, env: { ...(smtp ? { SMTP_URL: smtp.url } : {}), ...resolved.env } });
    },
    async (started) => {
      await started.close();
      await smtp?.close();
    },
  );
  return new Proxy(app as SuiteApp, {
    get(target, key) {
      if (key !== 'smtp') return Reflect.get(target, key);
      if (!smtp) throw new Error('useTestApp: pass { smtp: true } to get an SMTP server');
      return smtp;
    },
  });
}

/**
 * A resource one suite shares (the app, a browser, an MCP client): started in beforeAll, closed in
 * afterAll (after hooks run in reverse order, so it closes after what was registered later). The
 * handle reads through to the started value, so tests use it as if it were the value itself.
 */
export function useSuiteResource<T extends object>(start: () => Promise<T>, stop: (value: T) => Promise<void>): T {
  let current: T | undefined;
  beforeAll(async () => {
    current = await start();
  });
  afterAll(async () => {
    if (current) await stop(current);
  });
  return new Proxy({} as T, {
    get(_target, key) {
      if (!current) throw new Error('the suite resource starts in beforeAll; use it inside a test or a later hook');
      const value: unknown = Reflect.get(current, key);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}

/** The SMTP server of a suite started with useTestApp({ smtp: true }), readable before beforeAll has run. */
export function smtpOf(t: SuiteApp): TestSmtpServer {
  return new Proxy({} as TestSmtpServer, {
    get(_target, key) {
      const server = t.smtp;
      const value: unknown = Reflect.get(server, key);
      return typeof value === 'function' ? value.bind(server) : value;
    },
  });
}

/**
 * Changes a task row directly (a state no API call can reach) and publishes the change, as every use
 * case does, so the read caches and held reads see it (store/change-feed.ts).
 */
export async function writeTask(t: TestApp, taskId: string, changes: Parameters<typeof updateTask>[2]): Promise<void> {
  await updateTask(t.store.db, taskId, changes);
  await t.deps.changes.publish({ kind: 'task', taskId });
}

/** A valid task body (unique description each call); override any field. */
export function validTask(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    task_type: 'real_world_verification',
    description: `Check whether the bakery at 12 Main Street is open on Sunday mornings (${Math.random().toString(36).slice(2)}).`,
    location_required: true,
    location_detail: 'Springfield',
    contact_email: 'agent@mail.example-agent.dev',
    ...overrides,
  };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
