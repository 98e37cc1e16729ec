import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { AppError, isAppError } from '../../domain/errors.js';
import { html, type SafeHtml } from '../../domain/html.js';
import { assertRole } from '../../domain/team/actor.js';
import { iso, parseDateTime } from '../../domain/time.js';
import { contractError, sendError } from '../../http/errors.js';
import { unseenTasks } from '../../services/alerts/live-console.js';
import type { ServiceDeps } from '../../services/context.js';
import { waitingCount } from '../../services/messages/states.js';
import { asStoreUnavailable } from '../../store/faults.js';
import { csrfMatches, readSession, type Session } from './auth/session.js';
import { flash, page, type Section } from './layout.js';

/**
 * What every console route module shares: form helpers, the security headers and error page of the
 * console's scope, the session guard and the page renderer (routes.ts builds it once per scope).
 */

export type Form = Record<string, unknown>;

/** The console script's own requests (push subscriptions) send JSON and are answered in JSON. */
function sentJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').startsWith('application/json');
}
declare module 'fastify' {
  interface FastifyRequest {
    operatorSession?: Session;
  }
}

// connect-src: the live queue's event stream and page refreshes (live.ts), the evidence-file upload
// (an XHR to the console itself); manifest-src, worker-src: the installable console (pwa.ts).
const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; manifest-src 'self'; worker-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
export const DONE: Record<string, string> = {
  accepted: 'Task accepted. The requester sees the ETA.',
  delivered: 'Delivered. The receipt is signed and published with the task.',
  rejected: 'Task rejected.',
  notes: 'Draft saved. It stays editable until delivery.',
  eta: 'ETA updated.',
  added: 'Added to the blocklist.',
  removed: 'Removed from the blocklist.',
  retried: 'Queued again; the worker sends it shortly.',
  withdrawn: 'Task withdrawn: rejected with the reason “Withdrawn at the requester’s request.”',
  replied: 'Reply queued: it is mailed to the sender shortly and shown below.',
  message_done: 'Marked done: the message no longer waits.',
  blocked: 'Sender blocked. New tasks and messages from it are refused.',
  file_removed: 'File removed.',
  webhook: 'Webhook queued again; the worker sends it shortly.',
  team: 'Operator updated.',
  key_revoked: 'Key revoked: it stopped working at once.',
  duty: 'Duty updated.',
  assigned: 'Assignment saved.',
  proposed: 'Proposed: other operators approve it in their Approve view before it is delivered.',
  approved: 'Approval counted. At the required count the task is delivered.',
  sent_back: 'Sent back: the proposer sees your reason, and approvals start again.',
  asked: 'Question sent: the requester sees it on the task (and by e-mail or webhook); the answer appears below.',
};
/**
 * Route config of console actions by the role they need (contract "A team of operators"): each
 * route that uses `guarded` adds one of these as its `config`; the session guard enforces it.
 */
export const FOR_OPERATOR = { kind: 'admin', role: 'operator' } as const;
export const FOR_ADMIN = { kind: 'admin', role: 'admin' } as const;
// Pages for people: not part of the OpenAPI description.
export const HIDDEN = { hide: true } as const;
export const TASK_ACTIONS = ['accept', 'deliver', 'reject', 'notes', 'eta', 'withdraw'] as const;
export type TaskAction = (typeof TASK_ACTIONS)[number];

/** A parsed query string or form body is an object; anything else reads as an empty form. */
export function isForm(value: unknown): value is Form {
  return typeof value === 'object' && value !== null;
}

/**
 * Console query strings: named fields take any value (`text` keeps only strings, as before) and
 * other fields pass through, so no query is refused before the session check runs.
 */
export const QUERY_FIELD = Type.Optional(Type.Unknown());
export const OPEN_QUERY = { additionalProperties: true } as const;
/** Path parameters: any text; the services answer 404 for what they do not know. */
export const PARAM = Type.String();

export function text(form: Form, name: string): string | undefined {
  const value = form[name];
  return typeof value === 'string' ? value : undefined;
}

/** Browsers send textarea line breaks as CRLF; the deliverable (and its hash) uses LF, as the editor shows it. */
export function notes(form: Form, name: string): string | undefined {
  return text(form, name)?.replace(/\r\n?/g, '\n');
}

/** A datetime-local value plus the browser's offset (minutes, as getTimezoneOffset gives it) → ISO UTC. */
export function localToIso(form: Form, name: string): string | undefined {
  const local = text(form, name)?.trim();
  if (!local) return undefined;
  const parsed = parseDateTime(local);
  if (!parsed) return local;
  const offset = Number(text(form, 'eta_offset') ?? '0');
  const minutes = Number.isInteger(offset) && Math.abs(offset) <= 24 * 60 ? offset : 0;
  return iso(new Date(parsed.getTime() + minutes * 60_000));
}

/** A local origin for resolving `next`: only its path and query are kept. */
const NEXT_BASE = 'http://console.invalid';

/**
 * Where a sign-in may send the operator back to: a console path, judged after the URL parser has
 * resolved dot segments (`/operator/../../evil`, `/operator/%2e%2e/x`), so what is checked is
 * the path the browser will request.
 */
export function safeNext(value: string | undefined): string {
  if (!value || !value.startsWith('/') || value.startsWith('//') || /[\s\\]/.test(value)) return '/operator';
  let url: URL;
  try {
    url = new URL(value, NEXT_BASE);
  } catch {
    return '/operator';
  }
  if (url.origin !== NEXT_BASE) return '/operator';
  return url.pathname === '/operator' || url.pathname.startsWith('/operator/') ? `${url.pathname}${url.search}` : '/operator';
}

export interface ConsoleKit {
  render(
    reply: FastifyReply,
    session: Session | null,
    section: Section,
    title: string,
    body: SafeHtml,
    status?: number,
    more?: SafeHtml,
  ): Promise<FastifyReply>;
  /** The signed-in session of a guarded request. */
  session(request: FastifyRequest): Session;
  /** Route options of every page that needs a signed-in operator (and a CSRF token on POST). */
  guarded: { preHandler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>; config: { kind: 'admin' }; schema: typeof HIDDEN };
  /** The confirmation flash named by `?done=` of a redirect, if any. */
  doneNotice(request: FastifyRequest): SafeHtml | undefined;
  /** The header's counts for this request, read once (render reads them too). */
  headerCounts(request: FastifyRequest): Promise<HeaderCounts>;
}

/** The counts in a signed-in page's header: new tasks not yet seen, messages waiting. */
export interface HeaderCounts {
  unseen: number;
  waiting: number;
}

/** Installs the console's headers and error page on `scope` and returns the shared helpers. */
export function consoleKit(scope: FastifyInstance, deps: ServiceDeps): ConsoleKit {
  scope.addHook('onRequest', async (_request, reply) => {
    reply.header('Content-Security-Policy', CSP);
    reply.header('X-Frame-Options', 'DENY');
    reply.header('X-Content-Type-Options', 'nosniff');
    // Task ids are access tokens: never leak them in a Referer.
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('Cache-Control', 'no-store');
  });

  // One read of the header's counts per request, whoever asks first (a page that starts it beside
  // its own reads saves a round trip to the store, docs/performance.md).
  const started = new WeakMap<FastifyRequest, Promise<HeaderCounts>>();
  const headerCounts = (request: FastifyRequest): Promise<HeaderCounts> => {
    let counts = started.get(request);
    if (counts === undefined) {
      // Kept counts (docs/inbox.md): the same cost whatever the history.
      counts = Promise.all([unseenTasks(deps), waitingCount(deps)]).then(([unseen, waiting]) => ({ unseen, waiting }));
      started.set(request, counts);
      // A failed read is not kept: the error page's render asks the store again.
      counts.catch(() => started.delete(request));
    }
    return counts;
  };

  const render = async (reply: FastifyReply, session: Session | null, section: Section, title: string, body: SafeHtml, status = 200, more?: SafeHtml) => {
    const counts = session ? await headerCounts(reply.request) : undefined;
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(page({ title, section, session, body, ...counts, ...(more ? { more } : {}) }));
  };

  scope.setErrorHandler(async (error: FastifyError, request, reply) => {
    // The console script's JSON requests are answered as the API answers them.
    if (sentJson(request)) return sendError(reply, contractError(error, request, deps.store.faults));
    const known = isAppError(error) ? error : asStoreUnavailable(deps.store.faults, error);
    const status = known?.status ?? (typeof error.statusCode === 'number' && error.statusCode < 500 ? error.statusCode : 500);
    if (status >= 500) request.log.error({ err: error }, 'console error');
    if (known) for (const [name, value] of Object.entries(known.headers)) reply.header(name, value);
    const message =
      known?.code === 'service_unavailable'
        ? known.message
        : status >= 500
          ? `Something went wrong on our side. Request id: ${request.id}.`
          : (known?.message ?? 'The request could not be handled.');
    const details = (known?.extras.details as string[] | undefined) ?? [];
    const body = html`${flash('error', message, details)}<div><a class="back" href="/operator">← Back to the queue</a></div>`;
    return render(reply, request.operatorSession ?? null, 'none', status === 404 ? 'Not found' : 'Error', body, status);
  });

  /**
   * Signed-in operators only; POSTs must also carry the session's CSRF token. The console script's
   * JSON requests are refused in JSON (401), not redirected to a page fetch() would follow.
   */
  const requireSession = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await readSession(deps, request);
    if (!session && sentJson(request)) return sendError(reply, new AppError('unauthorized', 'Sign in to the console first.'));
    if (!session) {
      const next = request.method === 'GET' ? request.url : '/operator';
      return reply.redirect(`/operator/login?next=${encodeURIComponent(safeNext(next))}`, 303);
    }
    if (request.method === 'POST' && !csrfMatches(session, text((request.body ?? {}) as Form, '_csrf'))) {
      request.log.warn('console: POST without a valid CSRF token');
      if (sentJson(request))
        return sendError(reply, new AppError('unauthorized', 'This request did not come from the console. Reload the page and try again.'));
      request.operatorSession = session;
      return render(
        reply,
        session,
        'none',
        'Form expired',
        html`${flash('error', 'This form has expired or did not come from the console. Reload the page and try again.')}<div><a class="back" href="/operator">← Back to the queue</a></div>`,
        403,
      );
    }
    request.operatorSession = session;
    request.actor = session.actor;
    // The one role check of the console: the route's declared role (FOR_OPERATOR, FOR_ADMIN).
    assertRole(session.actor, request.routeOptions.config.role);
    return undefined;
  };
  const session = (request: FastifyRequest): Session => {
    if (!request.operatorSession) throw new AppError('unauthorized', 'Sign in first.');
    return request.operatorSession;
  };
  const guarded = { preHandler: requireSession, config: { kind: 'admin' as const }, schema: HIDDEN };
  const doneNotice = (request: FastifyRequest): SafeHtml | undefined => {
    const done = isForm(request.query) ? text(request.query, 'done') : undefined;
    return done && DONE[done] ? flash('ok', DONE[done]) : undefined;
  };
  return { render, headerCounts, session, guarded, doneNotice };
}
