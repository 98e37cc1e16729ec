import type { ServiceDeps } from '../services/deps.js';
import { EmailChecker } from './email.js';
import { policiesFor, type Policies } from './limits.js';
import { ReadLimiter } from './reads.js';

/**
 * Per-application abuse-control state built once from the deps: the quota policies, the e-mail
 * checker (with its DNS cache) and the in-memory read limiter. Kept beside the deps rather than in
 * them so the shared ServiceDeps type stays as it is.
 */
export interface AbuseState {
  policies: Policies;
  email: EmailChecker;
  reads: ReadLimiter;
}

const states = new WeakMap<ServiceDeps, AbuseState>();

export function abuseState(deps: ServiceDeps): AbuseState {
  let state = states.get(deps);
  if (!state) {
    state = {
      policies: policiesFor(deps.config.limits),
      email: new EmailChecker(deps.config, deps.clock),
      reads: new ReadLimiter(deps.store.db, deps.clock, deps.log, deps.config.limits.readsPerMinute),
    };
    states.set(deps, state);
  }
  return state;
}
