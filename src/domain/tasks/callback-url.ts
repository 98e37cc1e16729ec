import { ipLiteral, isLocalhostName, isPublicAddress } from '../network/addresses.js';

/**
 * The rules of a task's `callback_url` (contract "Webhooks"), checked at submission by every door
 * alike. The URL is parsed the WHATWG way, which is also how it is parsed at delivery, so
 * `http://2130706433/`, `http://0x7f.1/` and `http://017700000001/` are all seen as 127.0.0.1
 * here exactly as the delivery code would see them. Names are not resolved here: the delivery
 * resolves and checks them again (webhooks/target.ts). The URL itself is never echoed.
 */

export const CALLBACK_URL_MAX_CHARS = 2000;

/** When a callback_url hears from the service: the five webhook events, in the words every document uses. */
export const WEBHOOK_WHEN =
  'when the task is accepted, delivered or rejected, when the operator asks a question (task.question), when an accepted task passes its deadline (task.deadline_passed), and at each approval of a task needing several (task.approval)';

/** Said with a refusal a developer meets on their own machine (a receiver on localhost, plain http). */
const PRIVATE_HINT = '; a deployment for local development can allow it with WEBHOOK_ALLOW_PRIVATE=true';

/** The detail of a refusal (after the field name), or null when the URL is acceptable. */
export function callbackUrlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL, e.g. https://agent.example.com/hooks/tasks';
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  const literal = url.hostname === '' ? null : ipLiteral(url.hostname);
  const local = (literal !== null && !isPublicAddress(literal)) || isLocalhostName(url.hostname);
  if (!schemes.includes(url.protocol)) {
    if (allowPrivate) return 'must be an http:// or https:// URL';
    return `must be an https:// URL${url.protocol === 'http:' && local ? PRIVATE_HINT : ''}`;
  }
  if (url.hostname === '') return 'must be an absolute URL with a host';
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  if (allowPrivate) return null;
  if (local) return `must not point at a loopback, private, link-local or otherwise reserved address${PRIVATE_HINT}`;
  return null;
}
