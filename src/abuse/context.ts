import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../domain/time.js';
import type { Store } from '../store/db.js';
import type { AbuseState } from './state.js';

export type { Caller } from '../domain/caller.js';

/** What abuse control needs from the application's dependencies (AbuseDeps satisfies it). */
export interface AbuseDeps {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
  /** Server secret for keyed hashes of client addresses. */
  secret: Buffer;
  /** Quota policies, the e-mail checker and the read limiter, built once in src/deps.ts. */
  abuse: AbuseState;
}
