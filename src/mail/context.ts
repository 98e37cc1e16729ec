import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../domain/time.js';
import type { Store } from '../store/db.js';
import type { OutboxWake } from './wake.js';

/** What the mail modules need from the application's dependencies (ServiceDeps satisfies it). */
export interface MailDeps {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
  /** Nudges this instance's mail worker when mail is queued. */
  outboxWake: OutboxWake;
}
