import type { AppError } from '../../domain/errors.js';
import type { ServiceDeps } from '../context.js';
import { recordAudit } from './audit.js';

/**
 * A failed console sign-in (a key or a passkey): counted by the failed-attempt throttle
 * (abuse/admin-throttle.ts) and audited within its bound: one `signin.failed` row per failure
 * while the address is under ADMIN_FAILURES_PER_MINUTE, one `signin.throttled` row when it goes
 * over (once per address and window), then nothing but the kept count (signin_failures).
 * Returns the answer: the refusal, or 429 / 403 once throttled or blocked.
 */
export async function failedSignIn(
  deps: ServiceDeps,
  attempt: { clientHash: string; via: 'key' | 'passkey'; refusal: AppError; operatorId?: string | undefined },
  log: { warn(details: object, message: string): void },
): Promise<AppError> {
  const { clientHash, via, refusal, operatorId } = attempt;
  const outcome = await deps.abuse.adminThrottle.attempt(deps, { clientHash, source: 'web_form' }, log, refusal, operatorId);
  const actor = operatorId ?? 'anonymous';
  if (outcome.audit === 'each') await recordAudit(deps.store.db, deps, { actor, action: 'signin.failed', details: { via, client: clientHash } });
  else if (outcome.audit === 'throttled')
    await recordAudit(deps.store.db, deps, {
      actor,
      action: 'signin.throttled',
      details: {
        via,
        client: clientHash,
        window_start: outcome.window,
        limit: deps.config.adminThrottle.perClientPerMinute,
        note: 'further failed sign-ins from this address in this minute are counted, not audited one by one',
      },
    });
  return outcome.error;
}
