import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PRODUCT_NAME, summary } from '../docs/documents.js';
import { documentById } from '../docs/endpoints.js';
import { prefersMarkdown } from '../docs/http.js';
import { documentSet, readLive } from '../docs/document-set.js';
import { type AppError, isAppError } from '../domain/errors.js';
import { callerFrom } from '../http/client.js';
import { fromFastify } from '../http/errors.js';
import type { DocsDeps } from '../docs/context.js';
import { getTask, submitTask } from '../services/tasks.js';
import { html, type SafeHtml } from '../domain/html.js';
import { statusPagePath } from '../domain/urls.js';
import { docsIndexBody, docsIndexMarkdown, documentBody, documentMarkdown } from './pages/docs.js';
import { fieldErrors, formValues, toTaskPayload } from './pages/form.js';
import { EMPTY_FORM, formPageBody, homeBody, type FormState } from './pages/home.js';
import { page, sendMarkdown, sendPage } from './pages/layout.js';
import { lookupBody, notFoundBody, notFoundMarkdown, statusBody, statusMarkdown } from './pages/status.js';

/**
 * The human pages: home with the submission form, the status page, and a page per document.
 * Server-rendered, no script. The form goes through the same submitTask as REST and MCP.
 */

// Pages are for people: they stay out of the OpenAPI document.
const hidden = { hide: true } as const;

// RFC 8631: how a program that lands on the home page finds the API description.
const DISCOVERY_LINKS = '</openapi.json>; rel="service-desc"; type="application/json", </api.md>; rel="service-doc"; type="text/markdown", </agent.json>; rel="describedby"; type="application/json"';

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

async function submitForm(deps: DocsDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const values = formValues(request.body);
  try {
    const result = await submitTask(deps, callerFrom(request, deps, 'web_form'), toTaskPayload(values));
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

async function showTask(deps: DocsDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const query = request.query as { id?: unknown };
  const id = typeof query.id === 'string' ? query.id.trim() : '';
  const markdown = prefersMarkdown(request);
  if (id === '') {
    if (markdown) return sendMarkdown(reply, 200, `# Check a task\n\nAsk for /tasks?id=<task_id>, or GET ${deps.config.baseUrl}/api/v1/tasks/<task_id>.\n`);
    return sendPage(reply, 200, page({ title: 'Check a task', section: 'status', body: lookupBody() }));
  }
  try {
    const task = await getTask(deps, id);
    if (markdown) return sendMarkdown(reply, 200, statusMarkdown(deps, task), { noStore: true });
    return sendPage(reply, 200, page({ title: `Task ${task.status}`, section: 'status', body: statusBody(deps, task), noindex: true }), { noStore: true });
  } catch (error) {
    if (!isAppError(error) || error.code !== 'task_not_found') throw error;
    if (markdown) return sendMarkdown(reply, 404, notFoundMarkdown(deps, id), { noStore: true });
    return sendPage(reply, 404, page({ title: 'Task not found', section: 'status', body: notFoundBody(id), noindex: true }), { noStore: true });
  }
}

export async function registerPages(app: FastifyInstance, deps: DocsDeps): Promise<void> {
  await app.register(async (scope) => {
    // Forms are parsed only in this scope: the JSON API keeps answering 415 to them.
    await scope.register(formbody, { bodyLimit: deps.config.limits.maxBodyBytes });

    scope.get('/', { config: { kind: 'read' }, schema: hidden }, async (request, reply) => {
      if (prefersMarkdown(request)) return sendMarkdown(reply.header('Link', DISCOVERY_LINKS), 200, documentSet(deps).bodies.index.body);
      return renderHome(deps, request, reply);
    });

    scope.post('/tasks', { config: { kind: 'task' }, schema: hidden }, async (request, reply) => submitForm(deps, request, reply));

    // A form that never reached the service (over the size limit, another encoding) still gets a
    // page a person can read, with the form to try again; everything else goes to the app's handler.
    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      const known = isAppError(error) ? error : fromFastify(error);
      if (request.method !== 'POST' || !known || known.status >= 500) throw error;
      request.log.info({ err: error }, 'web form refused before submission');
      return renderRefusal(deps, reply, known.status, { values: EMPTY_FORM.values, errors: {}, general: [html`${known.message}`] });
    });

    scope.get('/tasks', { config: { kind: 'read' }, schema: hidden }, async (request, reply) => showTask(deps, request, reply));

    scope.get('/docs', { config: { kind: 'read' }, schema: hidden }, async (request, reply) => {
      if (prefersMarkdown(request)) return sendMarkdown(reply, 200, docsIndexMarkdown(deps.config.baseUrl));
      return sendPage(reply, 200, page({ title: 'Documents for agents', section: 'docs', body: docsIndexBody() }));
    });

    scope.get('/docs/:id', { config: { kind: 'read' }, schema: hidden }, async (request, reply) => {
      const { id } = request.params as { id: string };
      const doc = documentById(id);
      if (!doc) {
        if (prefersMarkdown(request)) return sendMarkdown(reply, 404, docsIndexMarkdown(deps.config.baseUrl));
        return sendPage(reply, 404, page({ title: 'No such document', section: 'docs', body: html`<p class="alert bad">There is no document called “${id.slice(0, 80)}”.</p>${docsIndexBody()}` }));
      }
      const set = documentSet(deps);
      if (prefersMarkdown(request)) return sendMarkdown(reply, 200, documentMarkdown(deps, doc, set));
      const live = doc.id === 'human' || doc.id === 'capabilities' ? await readLive(deps, request) : null;
      return sendPage(reply, 200, page({ title: doc.title, description: doc.description, section: 'docs', body: documentBody(deps, doc, set, live) }));
    });
  });
}
