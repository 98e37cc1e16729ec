import path from 'node:path';
import { isLocalhostName } from './domain/network/addresses.js';
import { parseSmtpUrl, SmtpUrlError } from './domain/network/smtp-url.js';

/**
 * Every configuration variable, validated once at start. A bad value stops the process with a
 * message naming the variable (ConfigError). Defaults follow docs/spec/contract.md.
 */

export interface Limits {
  /** Request body maximum, bytes. */
  maxBodyBytes: number;
  descriptionMin: number;
  descriptionMax: number;
  messageMin: number;
  messageMax: number;
  locationDetailMax: number;
  /** output_format, requester, from and subject. */
  shortTextMax: number;
  budgetMax: number;
  tasksPerHour: number;
  tasksPerDay: number;
  messagesPerHour: number;
  messagesPerDay: number;
  statusPollPerDay: number;
  readsPerMinute: number;
  servicesPageMax: number;
  duplicateWindowHours: number;
  idempotencyWindowHours: number;
  dailyTaskCap: number;
  dailyEmailCap: number;
  /** E-mail domain look-ups (DNS) one client may cause per minute, over all instances. */
  emailLookupsPerMinute: number;
  /** Refusals within 24 h after which a client is blocked. */
  autoBlockRefusals: number;
  autoBlockHours: number;
  /** A verified agent's own limits (docs/verified-agents.md): its key is the client. */
  verified: { tasksPerHour: number; tasksPerDay: number; statusPollPerDay: number; messagesPerHour: number; messagesPerDay: number };
}

/** The outbox worker's timing (docs/mail.md). */
export interface MailSettings {
  /** How often the worker looks for due mail. */
  pollMs: number;
  /** First retry delay; doubles per failed attempt up to retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Attempts before a mail is marked failed (a permanent 5xx rejection fails it at once). */
  maxAttempts: number;
  /** A claim's lease; renewed by a heartbeat while the mail is being sent, so a dead worker's mail is free again within it. */
  leaseMs: number;
  /** SMTP connections one worker keeps; it has 16 mails in flight per connection (services/delivery/mail-worker.ts). */
  concurrency: number;
}

/** Connection handling (docs/operations.md#store-faults-srcstorefaultsts-srcstoredbts): slow clients and floods of sockets cannot hold the service. */
export interface ServerSettings {
  /** The whole request (headers and body) must arrive within this time; then 408 and closed. */
  requestTimeoutMs: number;
  /** The headers must arrive within this time. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time. */
  keepAliveTimeoutMs: number;
  /** A connection with no traffic either way is closed after this time (held long-polls excepted). */
  idleTimeoutMs: number;
  /** Open connections at most, over all clients; more are answered 503 and closed. */
  maxConnections: number;
  /** Open connections at most from one socket address. */
  maxConnectionsPerAddress: number;
}

/** Throttle of failed operator-key attempts (admin API and console sign-in). */
export interface AdminThrottleSettings {
  /** Failed attempts per minute from one client before further failures are slowed and refused. */
  perClientPerMinute: number;
  /** Failed attempts per minute from all clients together. */
  globalPerMinute: number;
  /** How long a throttled failure is held before its 429 (bounds guesses per connection). */
  delayMs: number;
}

/** Evidence files attached to deliverables (docs/attachments.md). */
export interface AttachmentSettings {
  /** Largest file, bytes: the upload is cut there with 413 while streaming. */
  maxBytes: number;
  /** Files per task. */
  maxPerTask: number;
}

/** The webhook worker's timing and SSRF guard (docs/webhooks.md). */
export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE: lifts the SSRF guard and allows http:// callback URLs (tests, private deployments). */
  allowPrivate: boolean;
  /** First retry delay; doubles per failed attempt up to retryMaxMs, with ±20 % jitter. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Attempts before an event is marked failed. */
  maxAttempts: number;
  /** How long one delivery may take, connection and answer included. */
  timeoutMs: number;
}

/** What the store keeps and for how long (docs/operations.md). */
export interface RetentionSettings {
  /** Tasks final for longer lose their contact e-mail, callback URL, attachments; messages older lose their text. */
  days: number;
  /** Sent outbox rows are deleted this many days after sending. */
  sentMailDays: number;
  /** How often the retention run starts. */
  intervalMs: number;
}

/** The development profile (contract, "Agent control and development"; docs/development.md). */
export interface DevSettings {
  /** DEV_MODE=true: per-client limits out of the way, readable logs, X-Dev-Mode on every response. Loopback BASE_URL only. */
  enabled: boolean;
  /** DEV_AUTO_OPERATOR: a stand-in operator that moves every new task on (only with DEV_MODE). */
  autoOperator: DevAutoOperator | undefined;
  /** DEV_AUTO_OPERATOR_DELAY_MS: how long the stand-in waits before each step. */
  autoOperatorDelayMs: number;
}

export const DEV_AUTO_OPERATOR_MODES = ['accept', 'deliver', 'reject', 'ask'] as const;
export type DevAutoOperator = (typeof DEV_AUTO_OPERATOR_MODES)[number];

/** In the development profile a per-client limit not set explicitly is this: out of the way. */
const DEV_LIMIT = 1_000_000;

/** The deadline sweep (services/tasks/deadlines.ts, docs/questions.md). */
export interface DeadlineSettings {
  /** DEADLINE_AUTO_REJECT: reject a task still submitted when its deadline passes. */
  autoReject: boolean;
  /** How often the sweep looks for passed deadlines (well within the minute the contract allows). */
  sweepIntervalMs: number;
}

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  /** ALLOWED_HOSTS: extra host names /mcp answers besides BASE_URL's (DNS-rebinding protection). */
  allowedHosts: string[];
  /** MCP_TASK_HOLD_SECONDS: how long MCP tasks/get holds an open task for a change (0 = answer at once). */
  mcpTaskHoldSeconds: number;
  dataDir: string;
  databaseUrl: string;
  adminKey: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  operatorEmail: string | undefined;
  dnsServers: string[];
  dnsTimeoutMs: number;
  trustProxy: number;
  logLevel: string;
  profileFile: string | undefined;
  catalogFile: string | undefined;
  limits: Limits;
  mail: MailSettings;
  /** RESPONSE_TARGET_HOURS: overrides the profile file's response_target_hours when set. */
  responseTargetHours: number | undefined;
  push: PushSettings;
  /** Connection, acquire and statement timeout of the store (and SQLite's busy timeout). */
  storeTimeoutMs: number;
  server: ServerSettings;
  adminThrottle: AdminThrottleSettings;
  attachments: AttachmentSettings;
  webhooks: WebhookSettings;
  retention: RetentionSettings;
  dev: DevSettings;
  deadlines: DeadlineSettings;
  /** Trusted time for the receipt log's checkpoints (RFC 3161; docs/receipt-log.md); url unset: off. */
  tsa: { url: string | undefined; caFile: string | undefined; timeoutMs: number };
  /** CONSOLE_UNDO_SECONDS: how long a console accept, reject, reply or delivery is held for Undo (0: at once; docs/inbox.md). */
  undoSeconds: number;
  /** CONSOLE_UNDO_POLL_MS: how often the held-action committer looks for actions whose window has passed. */
  undoPollMs: number;
}

/** Web Push to the operator's devices (services/alerts/push.ts). */
export interface PushSettings {
  /** VAPID `sub`: how a push service reaches the sender (PUSH_SUBJECT; default mailto:OPERATOR_EMAIL, else an https BASE_URL, else mailto:MAIL_FROM). */
  subject: string;
  /** PUSH_ALLOW_INSECURE_LOOPBACK=true: also post to http://127.0.0.1/… endpoints. Tests only: never in production. */
  allowInsecureLoopback: boolean;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

/** SMTP_URL: the forms the mail client takes (domain/network/smtp-url.ts), refused at start otherwise. */
function smtpUrl(env: Env): string | undefined {
  const raw = url(env, 'SMTP_URL', ['smtp:', 'smtps:']);
  if (raw === undefined) return undefined;
  try {
    parseSmtpUrl(raw);
  } catch (error) {
    if (error instanceof SmtpUrlError) throw new ConfigError('SMTP_URL', error.message);
    throw error;
  }
  return raw;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function email(env: Env, name: string): string | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  if (!/^[^\s@<>()",;]+@[^\s@<>()",;]+$/.test(raw)) throw new ConfigError(name, 'must be an e-mail address');
  return raw;
}

function dnsServers(env: Env): string[] {
  const raw = read(env, 'DNS_SERVERS');
  if (raw === undefined) return [];
  return raw.split(',').map((entry) => {
    const server = entry.trim();
    const ok = /^(\d{1,3}\.){3}\d{1,3}(:\d{1,5})?$/.test(server) || /^\[[0-9a-fA-F:]+\](:\d{1,5})?$/.test(server) || /^[0-9a-fA-F:]+$/.test(server);
    if (!ok) throw new ConfigError('DNS_SERVERS', `has an entry that is not ip[:port]: "${server}"`);
    return server;
  });
}

function isLoopbackUrl(raw: string): boolean {
  const host = new URL(raw).hostname.toLowerCase();
  return isLocalhostName(host) || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** DEV_MODE is for a developer's own machine: refused at start unless BASE_URL is a loopback name. */
function devSettings(env: Env, baseUrl: string): DevSettings {
  const enabled = boolean(env, 'DEV_MODE', false);
  if (enabled && !isLoopbackUrl(baseUrl)) {
    throw new ConfigError('DEV_MODE', `is for a developer's own machine only: BASE_URL must be a loopback address (http://localhost:…), got ${baseUrl}`);
  }
  const mode = read(env, 'DEV_AUTO_OPERATOR');
  if (mode !== undefined && !enabled) throw new ConfigError('DEV_AUTO_OPERATOR', 'needs DEV_MODE=true');
  if (mode !== undefined && !(DEV_AUTO_OPERATOR_MODES as readonly string[]).includes(mode)) {
    throw new ConfigError('DEV_AUTO_OPERATOR', `must be one of ${DEV_AUTO_OPERATOR_MODES.join(', ')}, got "${mode}"`);
  }
  return {
    enabled,
    autoOperator: mode as DevAutoOperator | undefined,
    autoOperatorDelayMs: integer(env, 'DEV_AUTO_OPERATOR_DELAY_MS', 2000, 0, 3_600_000),
  };
}

/**
 * HOST: every interface by default; the development profile (which lifts abuse control and may
 * run a stand-in operator) listens on loopback only, `localhost` being every loopback address
 * (Fastify binds 127.0.0.1 and ::1), and refuses a HOST anyone else could reach.
 */
function listenHost(env: Env, dev: boolean): string {
  const host = read(env, 'HOST');
  if (!dev) return host ?? '0.0.0.0';
  if (host === undefined) return 'localhost';
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)) return bare;
  throw new ConfigError(
    'HOST',
    `must be a loopback address (localhost, 127.0.0.1 or ::1) with DEV_MODE, which is for a developer's own machine only; got ${host.slice(0, 80)}`,
  );
}

/** ALLOWED_HOSTS: comma-separated host names (no scheme, path or port), lower-cased. */
function allowedHosts(env: Env): string[] {
  const raw = read(env, 'ALLOWED_HOSTS');
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((entry) => entry.trim().toLowerCase().replace(/\.$/, ''))
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/.test(entry))
        throw new ConfigError('ALLOWED_HOSTS', `has an entry that is not a host name: "${entry.slice(0, 80)}"`);
      return entry;
    });
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const baseUrl = (url(env, 'BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const dataDir = path.resolve(read(env, 'DATA_DIR') ?? './data');
  const databaseUrl = read(env, 'DATABASE_URL') ?? `sqlite:${path.join(dataDir, 'service.db')}`;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with sqlite: or postgres://');
  }
  const adminKey = read(env, 'ADMIN_KEY');
  if (adminKey !== undefined && adminKey.length < 16) throw new ConfigError('ADMIN_KEY', 'must be at least 16 characters');
  const logLevel = read(env, 'LOG_LEVEL') ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', 'must be one of fatal, error, warn, info, debug, trace, silent');
  }

  const dev = devSettings(env, baseUrl);
  // The development profile lifts the per-client limits a developer meets on the second try; a
  // limit set explicitly still wins, so the limits themselves can be tried in development too.
  const perClient = (n: number) => (dev.enabled ? DEV_LIMIT : n);
  const descriptionMin = integer(env, 'DESCRIPTION_MIN_CHARS', 10, 1);
  const messageMin = integer(env, 'MESSAGE_MIN_CHARS', 5, 1);
  const limits: Limits = {
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 64 * 1024, 1024),
    descriptionMin,
    descriptionMax: integer(env, 'DESCRIPTION_MAX_CHARS', 5000, descriptionMin),
    messageMin,
    messageMax: integer(env, 'MESSAGE_MAX_CHARS', 5000, messageMin),
    locationDetailMax: integer(env, 'LOCATION_DETAIL_MAX_CHARS', 500, 1),
    shortTextMax: integer(env, 'SHORT_TEXT_MAX_CHARS', 200, 1),
    budgetMax: integer(env, 'BUDGET_MAX_USD', 100000, 0),
    tasksPerHour: integer(env, 'TASK_LIMIT_PER_HOUR', perClient(3), 1),
    tasksPerDay: integer(env, 'TASK_LIMIT_PER_DAY', perClient(5), 1),
    messagesPerHour: integer(env, 'MESSAGE_LIMIT_PER_HOUR', perClient(3), 1),
    messagesPerDay: integer(env, 'MESSAGE_LIMIT_PER_DAY', perClient(5), 1),
    statusPollPerDay: integer(env, 'STATUS_POLL_LIMIT_PER_DAY', perClient(1), 0),
    readsPerMinute: integer(env, 'READ_LIMIT_PER_MINUTE', perClient(600), 1),
    servicesPageMax: integer(env, 'SERVICES_PAGE_MAX', 50, 1),
    // A re-run of the same script is the development profile's daily routine: no duplicate check unless set.
    duplicateWindowHours: integer(env, 'DUPLICATE_WINDOW_HOURS', dev.enabled ? 0 : 24, 0),
    idempotencyWindowHours: integer(env, 'IDEMPOTENCY_WINDOW_HOURS', 24, 1),
    dailyTaskCap: integer(env, 'DAILY_TASK_CAP', perClient(300), 0),
    dailyEmailCap: integer(env, 'DAILY_EMAIL_CAP', perClient(200), 0),
    emailLookupsPerMinute: integer(env, 'EMAIL_LOOKUP_LIMIT_PER_MINUTE', perClient(10), 1),
    autoBlockRefusals: integer(env, 'AUTO_BLOCK_REFUSALS', perClient(10), 1),
    autoBlockHours: integer(env, 'AUTO_BLOCK_HOURS', 24, 1),
    verified: {
      tasksPerHour: integer(env, 'VERIFIED_TASK_LIMIT_PER_HOUR', perClient(20), 1),
      tasksPerDay: integer(env, 'VERIFIED_TASK_LIMIT_PER_DAY', perClient(100), 1),
      statusPollPerDay: integer(env, 'VERIFIED_STATUS_POLL_LIMIT_PER_DAY', perClient(20), 0),
      messagesPerHour: integer(env, 'VERIFIED_MESSAGE_LIMIT_PER_HOUR', perClient(10), 1),
      messagesPerDay: integer(env, 'VERIFIED_MESSAGE_LIMIT_PER_DAY', perClient(50), 1),
    },
  };

  return {
    dev,
    port,
    host: listenHost(env, dev.enabled),
    baseUrl,
    allowedHosts: allowedHosts(env),
    mcpTaskHoldSeconds: integer(env, 'MCP_TASK_HOLD_SECONDS', 20, 0, 50),
    dataDir,
    databaseUrl,
    adminKey,
    smtpUrl: smtpUrl(env),
    mailFrom: email(env, 'MAIL_FROM') ?? `no-reply@${new URL(baseUrl).hostname}`,
    operatorEmail: email(env, 'OPERATOR_EMAIL'),
    dnsServers: dnsServers(env),
    dnsTimeoutMs: integer(env, 'DNS_TIMEOUT_MS', 2000, 50, 60000),
    trustProxy: integer(env, 'TRUST_PROXY', 0, 0, 32),
    logLevel,
    profileFile: read(env, 'PROFILE_FILE'),
    catalogFile: read(env, 'CATALOG_FILE'),
    limits,
    responseTargetHours: read(env, 'RESPONSE_TARGET_HOURS') === undefined ? undefined : integer(env, 'RESPONSE_TARGET_HOURS', 12, 1, 720),
    push: pushSettings(env, baseUrl, email(env, 'MAIL_FROM') ?? `no-reply@${new URL(baseUrl).hostname}`),
    mail: {
      pollMs: integer(env, 'MAIL_POLL_MS', 1000, 10, 60_000),
      retryBaseMs: integer(env, 'MAIL_RETRY_BASE_MS', 2000, 1, 600_000),
      retryMaxMs: integer(env, 'MAIL_RETRY_MAX_MS', 30_000, 1, 3_600_000),
      maxAttempts: integer(env, 'MAIL_MAX_ATTEMPTS', 2880, 1),
      leaseMs: integer(env, 'MAIL_LEASE_MS', 6000, 300, 600_000),
      concurrency: integer(env, 'MAIL_CONCURRENCY', 4, 1, 64),
    },
    storeTimeoutMs: integer(env, 'STORE_TIMEOUT_MS', 3000, 100, 60_000),
    tsa: { url: url(env, 'TSA_URL', ['http:', 'https:']), caFile: read(env, 'TSA_CA_FILE'), timeoutMs: integer(env, 'TSA_TIMEOUT_MS', 5000, 100, 60_000) },
    server: {
      requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
      headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
      keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
      idleTimeoutMs: integer(env, 'IDLE_TIMEOUT_MS', 60_000, 100, 3_600_000),
      maxConnections: integer(env, 'MAX_CONNECTIONS', 4000, 1, 1_000_000),
      maxConnectionsPerAddress: integer(env, 'MAX_CONNECTIONS_PER_ADDRESS', 100, 1, 1_000_000),
    },
    adminThrottle: {
      perClientPerMinute: integer(env, 'ADMIN_FAILURES_PER_MINUTE', 10, 1),
      globalPerMinute: integer(env, 'ADMIN_FAILURES_GLOBAL_PER_MINUTE', 100, 1),
      delayMs: integer(env, 'ADMIN_FAILURE_DELAY_MS', 1000, 0, 60_000),
    },
    attachments: {
      maxBytes: integer(env, 'ATTACHMENT_MAX_BYTES', 25 * 1024 * 1024, 1, 1024 * 1024 * 1024),
      maxPerTask: integer(env, 'ATTACHMENTS_MAX_PER_TASK', 20, 0, 1000),
    },
    webhooks: {
      // The development profile's receivers are on the developer's own machine (loopback).
      allowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', dev.enabled),
      retryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 5000, 1, 3_600_000),
      retryMaxMs: integer(env, 'WEBHOOK_RETRY_MAX_MS', 3_600_000, 1, 86_400_000),
      // 5 s doubling to 1 h: ten attempts in the first 1.4 h, then hourly, about 3 days in all.
      maxAttempts: integer(env, 'WEBHOOK_MAX_ATTEMPTS', 81, 1, 100_000),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 50, 120_000),
    },
    retention: {
      days: integer(env, 'RETENTION_DAYS', 90, 1, 36_500),
      sentMailDays: integer(env, 'SENT_MAIL_RETENTION_DAYS', 7, 1, 36_500),
      intervalMs: integer(env, 'RETENTION_INTERVAL_MINUTES', 60, 1, 1440) * 60_000,
    },
    deadlines: {
      autoReject: boolean(env, 'DEADLINE_AUTO_REJECT', true),
      sweepIntervalMs: integer(env, 'DEADLINE_SWEEP_INTERVAL_MS', 20_000, 50, 60_000),
    },
    undoSeconds: integer(env, 'CONSOLE_UNDO_SECONDS', 10, 0, 120),
    undoPollMs: integer(env, 'CONSOLE_UNDO_POLL_MS', 1000, 50, 60_000),
  };
}

function pushSettings(env: Env, baseUrl: string, mailFrom: string): PushSettings {
  const subject = read(env, 'PUSH_SUBJECT');
  if (subject !== undefined && !/^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)$/.test(subject))
    throw new ConfigError('PUSH_SUBJECT', 'must be a mailto: address or an https: URL');
  const insecure = read(env, 'PUSH_ALLOW_INSECURE_LOOPBACK');
  if (insecure !== undefined && insecure !== 'true' && insecure !== 'false') throw new ConfigError('PUSH_ALLOW_INSECURE_LOOPBACK', 'must be true or false');
  const operator = read(env, 'OPERATOR_EMAIL');
  // VAPID wants mailto: or https:; a plain-http BASE_URL (development) falls back to MAIL_FROM.
  const fallback = operator ? `mailto:${operator}` : baseUrl.startsWith('https://') ? baseUrl : `mailto:${mailFrom}`;
  return { subject: subject ?? fallback, allowInsecureLoopback: insecure === 'true' };
}

/** For entry points: the config, or the bad variable's message on stderr and exit code 1. */
export function loadConfigOrExit(env: Env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
