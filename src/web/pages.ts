import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type, { type Static } from 'typebox';
import type { DocsDeps } from '../docs/context.js';
import { documentSet, readLive } from '../docs/document-set.js';
import { PRODUCT_NAME, summary } from '../docs/documents.js';
import { documentById } from '../docs/endpoints.js';
import { prefersMarkdown } from '../docs/http.js';
import { type AppError, isAppError } from '../domain/errors.js';
import { html, type SafeHtml } from '../domain/html.js';
import { statusPagePath } from '../domain/network/urls.js';
import type { PublicTask } from '../domain/tasks/schemas.js';
import { callerFrom } from '../http/client.js';
import { fromFastify } from '../http/errors.js';
import { sendMessage } from '../services/messages/messages.js';
import { answerQuestion } from '../services/questions/questions.js';
import { checkTaskReceipt } from '../services/tasks/receipt-check.js';
import { getTask, submitTask } from '../services/tasks/tasks.js';
import { registerFavicon } from './favicon.js';
import { docsIndexBody, docsIndexMarkdown, documentBody, documentMarkdown } from './pages/docs.js';
import { fieldErrors, formRuleDetails, formValues, toTaskPayload } from './pages/form.js';
import { EMPTY_FORM, type FormState, formPageBody, homeBody } from './pages/home.js';
import { page, sendMarkdown, sendPage } from './pages/layout.js';
import { intentOf, type MessageFormState, messageFieldErrors, messageFormValues, toMessagePayload } from './pages/message-form.js';
import type { AnswerFormState } from './pages/questions.js';
import { lookupBody, notFoundBody, notFoundMarkdown, type ReceiptVerdict, statusBody, statusMarkdown } from './pages/status.js';
import { PAGES_CSS, PAGES_JS } from './pages/style.js';
import { registerStaticAssets } from './static-assets.js';

/**
 * The human pages: home with the submission form, the status page, and a page per document.
 * Server-rendered, no script. The form goes through the same submitTask as REST and MCP.
 */

// Pages are for people: they stay out of the OpenAPI document.
const hidden = { hide: true } as const;
// Query fields take any value (the handlers keep only strings) and others pass through: a page
// never refuses a query string.
const anyValue = Type.Optional(Type.Unknown());
const TaskQuery = Type.Object({ id: anyValue, sent: anyValue, answered: anyValue }, { additionalProperties: true });
const ReceiptQuery = Type.Object({ id: anyValue }, { additionalProperties: true });
const DocParams = Type.Object({ id: Type.String() });

// RFC 8631: how a program that lands on the home page finds the API description.
const DISCOVERY_LINKS =
  '</openapi.json>; rel="service-desc"; type="application/json", </api.md>; rel="service-doc"; type="text/markdown", </agent.json>; rel="describedby"; type="application/json"';

async function renderHome(deps: DocsDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.header('Link', DISCOVERY_LINKS);
  const live = await readLive(deps, request);
  return sendPage(reply, 200, page({ title: PRODUCT_NAME, description: summary(deps), section: 'home', body: homeBody(deps, live, EMPTY_FORM) }));
}

/** A refused submission: the form again, with the values kept and the problems beside the fields. */
function renderRefusal(deps: DocsDeps, reply: FastifyReply, status: number, state: FormState): FastifyReply {
  return sendPage(reply, status, page({ title: 'Submit a task', section: 'home', body: formPageBody(deps, state) }), { noStore: true });
}

/** A refusal from the service, as the person should read it above the form. */
function generalMessage(error: AppError): SafeHtml {
  const extras = error.extras as { existing_task_id?: unknown; retry_after_seconds?: unknown };
  switch (error.code) {
    case 'duplicate_task': {
      const id = typeof extras.existing_task_id === 'string' ? extras.existing_task_id : undefined;
      return id
        ? html`The same task was already submitted in the last day. <a href="/tasks?id=${id}">See that task</a>.`
        : html`The same task was already submitted in the last day for this contact e-mail. Its link was sent by e-mail to that address.`;
    }
    case 'rate_limited':
    case 'capacity_reached': {
      const wait = typeof extras.retry_after_seconds === 'number' ? Math.ceil(extras.retry_after_seconds / 60) : undefined;
      return html`${error.message}${wait ? ` Try again in about ${wait} min.` : ''}`;
    }
    default:
      return html`${error.message}`;
  }
}

/**
 * The form's deadline is a datetime-local value; the pages' script sends the browser's offset
 * (minutes east of UTC) beside it, and the deadline is stored with that offset. Without the script
 * it is read as UTC, as the label then says.
 */
function withDeadlineOffset(payload: Record<string, unknown>, body: unknown): Record<string, unknown> {
  const raw = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).deadline_offset : undefined;
  const deadline = payload.deadline;
  if (typeof raw !== 'string' || !/^-?\d{1,4}$/.test(raw) || typeof deadline !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(deadline))
    return payload;
  const minutes = Number(raw);
  if (Math.abs(minutes) > 14 * 60) return payload;
  const abs = Math.abs(minutes);
  const offset = `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return { ...payload, deadline: `${deadline.length === 16 ? `${deadline}:00` : deadline}${offset}` };
}

/** What the validator says about a payload, without submitting it: [] when it passes. */
function validationDetails(deps: DocsDeps, payload: Record<string, unknown>): string[] {
  try {
    deps.validators.task(payload, deps.clock.now());
    return [];
  } catch (error) {
    if (!isAppError(error) || error.code !== 'validation_failed' || !Array.isArray(error.extras.details)) return [];
    return (error.extras.details as unknown[]).filter((d): d is string => typeof d === 'string');
  }
}

async function submitForm(deps: DocsDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const values = formValues(request.body);
  const payload = withDeadlineOffset(toTaskPayload(values), request.body);
  // The form's own rules refuse before the service is asked (nothing is counted), beside what the
  // validator would say, so one round trip shows every problem.
  const own = formRuleDetails(values);
  if (own.length > 0) {
    const details = validationDetails(deps, payload);
    const { byField, general } = fieldErrors([...details, ...formRuleDetails(values, details)]);
    return renderRefusal(deps, reply, 422, { values, errors: byField, general: general.map((g) => html`${g}`) });
  }
  try {
    const result = await submitTask(deps, callerFrom(request, deps, 'web_form'), payload);
    reply.headers(result.headers);
    return reply.code(303).header('Location', statusPagePath(result.body.task_id)).header('Cache-Control', 'no-store').send();
  } catch (error) {
    if (!isAppError(error)) throw error;
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    const details = Array.isArray(error.extras.details) ? (error.extras.details as unknown[]).filter((d): d is string => typeof d === 'string') : [];
    if (error.code === 'validation_failed' && details.length > 0) {
      const { byField, general } = fieldErrors(details);
      return renderRefusal(deps, reply, error.status, { values, errors: byField, general: general.map((g) => html`${g}`) });
    }
    return renderRefusal(deps, reply, error.status, { values, errors: {}, general: [generalMessage(error)] });
  }
}

/**
 * The status page's message form: the same sendMessage as POST /api/v1/messages. Sent: back to the
 * status page (303) saying so; refused: the status page again with the problems beside the fields.
 */
async function sendTaskMessage(deps: DocsDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
  const taskId = typeof body.task_id === 'string' ? body.task_id.trim() : '';
  const values = messageFormValues(body);
  // The task must exist: the form is only reachable from its status page, and the id is its key.
  const task = await getTask(deps, taskId).catch((error: unknown) => {
    if (isAppError(error) && error.code === 'task_not_found') return undefined;
    throw error;
  });
  if (!task) return sendPage(reply, 404, page({ title: 'Task not found', section: 'status', body: notFoundBody(taskId), noindex: true }), { noStore: true });
  const refuse = async (status: number, state: MessageFormState) =>
    sendPage(
      reply,
      status,
      page({
        title: `Task ${task.status}`,
        section: 'status',
        body: statusBody(deps, task, state, undefined, await receiptVerdict(deps, task)),
        noindex: true,
      }),
      { noStore: true },
    );
  try {
    const result = await sendMessage(deps, callerFrom(request, deps, 'web_form'), toMessagePayload(task.task_id, values));
    reply.headers(result.headers);
    return reply
      .code(303)
      .header('Location', `/tasks?id=${encodeURIComponent(task.task_id)}&sent=${intentOf(values)}#message`)
      .header('Cache-Control', 'no-store')
      .send();
  } catch (error) {
    if (!isAppError(error)) throw error;
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    const details = Array.isArray(error.extras.details) ? (error.extras.details as unknown[]).filter((d): d is string => typeof d === 'string') : [];
    if (error.code === 'validation_failed' && details.length > 0) {
      const { byField, general } = messageFieldErrors(details);
      return refuse(error.status, { values, errors: byField, general: general.map((g) => html`${g}`) });
    }
    return refuse(error.status, { values, errors: {}, general: [generalMessage(error)] });
  }
}

/**
 * The status page's answer form (docs/questions.md): the same answerQuestion as the API. Answered: back to
 * the question (303) saying so; refused: the status page again, the problem beside the answer.
 */
async function sendTaskAnswer(deps: DocsDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
  const text = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : '');
  const taskId = text('task_id').trim();
  const questionId = text('question_id').trim();
  const answer = text('answer');
  try {
    await answerQuestion(deps, { taskId, questionId, answer });
    return reply
      .code(303)
      .header('Location', `${statusPagePath(taskId)}&answered=${encodeURIComponent(questionId)}#${encodeURIComponent(questionId)}`)
      .header('Cache-Control', 'no-store')
      .send();
  } catch (error) {
    if (!isAppError(error)) throw error;
    const task = await getTask(deps, taskId).catch(() => undefined);
    if (!task) return sendPage(reply, 404, page({ title: 'Task not found', section: 'status', body: notFoundBody(taskId), noindex: true }), { noStore: true });
    const details = Array.isArray(error.extras.details) ? (error.extras.details as unknown[]).filter((d): d is string => typeof d === 'string') : [];
    const state: AnswerFormState =
      error.code === 'validation_failed' ? { questionId, value: answer, errors: details } : { questionId, value: answer, general: [generalMessage(error)] };
    return sendPage(
      reply,
      error.status,
      page({
        title: `Task ${task.status}`,
        section: 'status',
        body: statusBody(deps, task, undefined, state, await receiptVerdict(deps, task)),
        noindex: true,
      }),
      {
        noStore: true,
      },
    );
  }
}

/** The service's own check of a delivered task's receipt, for the verified box; none before delivery. */
async function receiptVerdict(deps: DocsDeps, task: PublicTask): Promise<ReceiptVerdict | undefined> {
  if (!task.receipt) return undefined;
  const check = await checkTaskReceipt(deps, task.task_id);
  return { valid: check.valid, signed_at: check.signed_at };
}

async function showTask(deps: DocsDeps, request: FastifyRequest, reply: FastifyReply, query: Static<typeof TaskQuery>): Promise<FastifyReply> {
  const id = typeof query.id === 'string' ? query.id.trim() : '';
  const markdown = prefersMarkdown(request);
  if (id === '') {
    if (markdown) return sendMarkdown(reply, 200, `# Check a task\n\nAsk for /tasks?id=<task_id>, or GET ${deps.config.baseUrl}/api/v1/tasks/<task_id>.\n`);
    return sendPage(reply, 200, page({ title: 'Check a task', section: 'status', body: lookupBody() }));
  }
  try {
    const task = await getTask(deps, id);
    if (markdown) return sendMarkdown(reply, 200, statusMarkdown(deps, task), { noStore: true });
    const sent = query.sent;
    const state: MessageFormState = { values: {}, errors: {}, general: [], sent: sent === 'ask' || sent === 'withdraw' ? sent : undefined };
    const answered = typeof query.answered === 'string' && task.questions.some((q) => q.question_id === query.answered) ? query.answered : undefined;
    return sendPage(
      reply,
      200,
      page({
        title: `Task ${task.status}`,
        section: 'status',
        body: statusBody(deps, task, state, { answered }, await receiptVerdict(deps, task)),
        noindex: true,
      }),
      {
        noStore: true,
      },
    );
  } catch (error) {
    if (!isAppError(error) || error.code !== 'task_not_found') throw error;
    if (markdown) return sendMarkdown(reply, 404, notFoundMarkdown(deps, id), { noStore: true });
    return sendPage(reply, 404, page({ title: 'Task not found', section: 'status', body: notFoundBody(id), noindex: true }), { noStore: true });
  }
}

export async function registerPages(app: FastifyInstance, deps: DocsDeps): Promise<void> {
  await app.register(async (plain) => {
    // Typed from the route schemas: handlers read query and params without casts.
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    // Forms are parsed only in this scope: the JSON API keeps answering 415 to them.
    await scope.register(formbody, { bodyLimit: deps.config.limits.maxBodyBytes });

    scope.get('/', { config: { kind: 'read' }, schema: hidden }, async (request, reply) => {
      if (prefersMarkdown(request)) return sendMarkdown(reply.header('Link', DISCOVERY_LINKS), 200, documentSet(deps).bodies.index.body);
      return renderHome(deps, request, reply);
    });

    registerStaticAssets(scope, [PAGES_CSS, PAGES_JS]);
    registerFavicon(scope);

    scope.post('/tasks', { config: { kind: 'task' }, schema: hidden }, async (request, reply) => submitForm(deps, request, reply));

    // A form that never reached the service (over the size limit, another encoding) still gets a
    // page a person can read, with the form to try again; everything else goes to the app's handler.
    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      const known = isAppError(error) ? error : fromFastify(error);
      if (request.method !== 'POST' || !known || known.status >= 500) throw error;
      request.log.info({ err: error }, 'web form refused before submission');
      if (request.url.startsWith('/tasks/answer')) {
        const back = html`<div class="alert bad" role="alert">${known.message} The answer was not sent.</div><p>Go back to the task’s status page and try again.</p>`;
        return sendPage(reply, known.status, page({ title: 'Answer not sent', section: 'status', body: back, noindex: true }), { noStore: true });
      }
      if (request.url.startsWith('/tasks/message')) {
        const back = html`<div class="alert bad" role="alert">${known.message} The message was not sent.</div><p>Go back to the task’s status page and try again.</p>`;
        return sendPage(reply, known.status, page({ title: 'Message not sent', section: 'status', body: back, noindex: true }), { noStore: true });
      }
      return renderRefusal(deps, reply, known.status, { values: EMPTY_FORM.values, errors: {}, general: [html`${known.message}`] });
    });

    scope.post('/tasks/message', { config: { kind: 'message' }, schema: hidden }, async (request, reply) => sendTaskMessage(deps, request, reply));
    // Answers use no quota (contract): counted as a read, as the API's answer route.
    scope.post('/tasks/answer', { config: { kind: 'read' }, schema: hidden }, async (request, reply) => sendTaskAnswer(deps, request, reply));

    // The receipt check for browsers without WebCrypto Ed25519 (and people without JavaScript).
    scope.get('/tasks/receipt-check', { config: { kind: 'read' }, schema: { ...hidden, querystring: ReceiptQuery } }, async (request, reply) => {
      const { id } = request.query;
      const result = await checkTaskReceipt(deps, typeof id === 'string' ? id.trim() : '');
      return reply.header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer').send(result);
    });

    scope.get('/tasks', { config: { kind: 'read' }, schema: { ...hidden, querystring: TaskQuery } }, async (request, reply) =>
      showTask(deps, request, reply, request.query),
    );

    scope.get('/docs', { config: { kind: 'read' }, schema: hidden }, async (request, reply) => {
      if (prefersMarkdown(request)) return sendMarkdown(reply, 200, docsIndexMarkdown(deps.config.baseUrl));
      return sendPage(reply, 200, page({ title: 'Documents for agents', section: 'docs', body: docsIndexBody() }));
    });

    scope.get('/docs/:id', { config: { kind: 'read' }, schema: { ...hidden, params: DocParams } }, async (request, reply) => {
      const { id } = request.params;
      const doc = documentById(id);
      if (!doc) {
        if (prefersMarkdown(request)) return sendMarkdown(reply, 404, docsIndexMarkdown(deps.config.baseUrl));
        return sendPage(
          reply,
          404,
          page({
            title: 'No such document',
            section: 'docs',
            body: html`<p class="alert bad">There is no document called “${id.slice(0, 80)}”.</p>${docsIndexBody()}`,
          }),
        );
      }
      const set = documentSet(deps);
      if (prefersMarkdown(request)) return sendMarkdown(reply, 200, documentMarkdown(deps, doc, set));
      const live = doc.id === 'human' || doc.id === 'capabilities' ? await readLive(deps, request) : null;
      return sendPage(reply, 200, page({ title: doc.title, description: doc.description, section: 'docs', body: documentBody(deps, doc, set, live) }));
    });
  });
}

/** The 404 page a browser gets for an unknown path: the site's chrome and the ways on. */
export function notFoundPage(reply: FastifyReply, path: string): FastifyReply {
  const body = html`<h1>Page not found</h1>
<p>Nothing lives at <code>${path.slice(0, 200)}</code>.</p>
<ul>
<li><a href="/">Submit a task</a> for a human operator</li>
<li><a href="/tasks">Check a task</a> with its id</li>
<li><a href="/docs">Documents for agents</a> (the API, MCP, OpenAPI)</li>
</ul>`;
  return sendPage(reply, 404, page({ title: 'Page not found', body, noindex: true }));
}
