import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { isJsonObject, type JsonObject } from '../../../domain/answers/response-schema.js';
import { resultProblems } from '../../../domain/answers/response-validator.js';
import { canonicalJson } from '../../../domain/canonical.js';
import { AppError, isAppError } from '../../../domain/errors.js';
import { actorOf } from '../../../http/admin-auth.js';
import { proposalChallenge } from '../../../services/console/approvals.js';
import { holdAction } from '../../../services/console/held-actions.js';
import { viewTask } from '../../../services/console/reads.js';
import { checkPatchNow } from '../../../services/console/transitions.js';
import type { ServiceDeps } from '../../../services/context.js';
import { type ConsoleKit, FOR_OPERATOR, type Form, HIDDEN, PARAM, text } from '../console-kit.js';
import { flash } from '../layout.js';
import { deliverResultConfirmView } from './deliver-confirm-view.js';
import { parseResultForm, valueAt } from './result-form-parse.js';
import type { ResultDraft } from './result-form-view.js';
import { parsedAssertion, showTaskPage } from './task-routes.js';

/**
 * The console's structured answers (docs/answers.md): the result form's own buttons (check, add or remove
 * a row, switch a oneOf/anyOf choice) and the delivery of a task with a response schema. Every
 * answer is rendered by the server, so the form works without a script; the rules are the
 * transition service's (operator-transitions.ts), the same as the admin API's.
 */

interface Read {
  value: unknown;
  problems: string[];
  json?: string;
}

/** The result as posted: from the raw JSON editor, or from the form's fields. */
function readResult(form: Form, schema: JsonObject): Read {
  if (text(form, 'result_source') === 'json') {
    const json = text(form, 'result_json') ?? '';
    try {
      return { value: JSON.parse(json) as unknown, problems: [], json };
    } catch {
      return { value: undefined, problems: ['result: the raw JSON is not valid JSON'], json };
    }
  }
  return parseResultForm(form, schema);
}

async function schemaOf(deps: ServiceDeps, taskId: string): Promise<JsonObject> {
  const task = await viewTask(deps, taskId);
  if (task.response_schema === null) throw new AppError('validation_failed', 'This task has no response schema: deliver it with text.', { details: [] });
  return task.response_schema;
}

function show(deps: ServiceDeps, kit: ConsoleKit, request: FastifyRequest, reply: FastifyReply, taskId: string, draft: ResultDraft, error?: AppError) {
  const notice = error ? flash('error', error.message, (error.extras.details as string[] | undefined) ?? []) : undefined;
  return showTaskPage(deps, kit, request, reply, taskId, { notice, result: draft, status: error?.status ?? 200 });
}

/** Delivering a task with a response schema: checked, confirmed once, then the transition. */
async function deliverStructured(deps: ServiceDeps, kit: ConsoleKit, request: FastifyRequest, reply: FastifyReply, taskId: string, form: Form) {
  const schema = await schemaOf(deps, taskId);
  const read = readResult(form, schema);
  const draft: ResultDraft = { value: read.value, form, problems: read.problems, ...(read.json === undefined ? {} : { json: read.json }) };
  if (read.problems.length > 0) {
    return show(
      deps,
      kit,
      request,
      reply,
      taskId,
      draft,
      new AppError('validation_failed', 'The answer could not be read; see the fields.', { details: read.problems }),
    );
  }
  const patch: Record<string, unknown> = { status: 'delivered', result: read.value };
  const credential = kit.session(request).credential;
  // A passkey session proposes a deliverable needing several approvals signed (docs/approvals.md).
  const assertion = credential.kind === 'passkey' ? text(form, 'assertion') : undefined;
  if (assertion) patch.assertion = parsedAssertion(assertion);
  else if (credential.kind === 'passkey' && text(form, 'confirmed') === '1') {
    const canonical = canonicalJson(read.value);
    const challenge = await proposalChallenge(deps, taskId, canonical);
    if (challenge !== null) {
      const sign = { challenge, credential: credential.id };
      return kit.render(
        reply,
        kit.session(request),
        'queue',
        'Sign the proposal',
        deliverResultConfirmView(taskId, canonical, schema, kit.session(request), sign),
      );
    }
  }
  try {
    if (text(form, 'confirmed') !== '1') {
      await checkPatchNow(deps, taskId, patch);
      return kit.render(
        reply,
        kit.session(request),
        'queue',
        'Confirm delivery',
        deliverResultConfirmView(taskId, canonicalJson(read.value), schema, kit.session(request)),
      );
    }
    // Held for undo like a text delivery (docs/inbox.md).
    if (await holdAction(deps, actorOf(request), { taskId, kind: 'deliver', payload: patch })) {
      return reply.redirect(`/operator/tasks/${encodeURIComponent(taskId)}`, 303);
    }
  } catch (error) {
    if (!isAppError(error) || error.code === 'task_not_found') throw error;
    return show(deps, kit, request, reply, taskId, { ...draft, problems: (error.extras.details as string[] | undefined) ?? [] }, error);
  }
  const proposed = (await proposalChallenge(deps, taskId, '')) !== null;
  return reply.redirect(`/operator/tasks/${encodeURIComponent(taskId)}?done=${proposed ? 'proposed' : 'delivered'}`, 303);
}

/** Adds an empty row to the array at `pointer`, or removes the row a pointer names. */
function applyRowOp(value: unknown, op: string): void {
  const [kind, pointer = ''] = op.split(/:(.*)/s);
  if (kind === 'add') {
    const rows = valueAt(value, pointer);
    if (Array.isArray(rows)) rows.push(undefined);
    else {
      const parent = valueAt(value, pointer.replace(/\/[^/]*$/, ''));
      const key = (pointer.split('/').at(-1) ?? '').replaceAll('~1', '/').replaceAll('~0', '~');
      if (isJsonObject(parent) && pointer !== '') parent[key] = [undefined];
    }
  } else if (kind === 'remove') {
    const index = Number(pointer.split('/').at(-1));
    const rows = valueAt(value, pointer.replace(/\/[^/]*$/, ''));
    if (Array.isArray(rows) && Number.isInteger(index)) rows.splice(index, 1);
  }
}

export function registerResultRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  scope.post(
    '/operator/tasks/:task_id/result',
    { ...kit.guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ task_id: PARAM }) } },
    async (request, reply) => {
      const { task_id } = request.params;
      const form = (request.body ?? {}) as Form;
      const schema = await schemaOf(deps, task_id);
      const read = readResult(form, schema);
      // The deliver buttons name their source (form or raw JSON); the others name their operation.
      const op = text(form, 'form_op') ?? (text(form, 'result_source') !== undefined ? 'deliver' : 'check');
      if (op === 'deliver') return deliverStructured(deps, kit, request, reply, task_id, form);
      if (op.startsWith('add:') || op.startsWith('remove:')) {
        applyRowOp(read.value, op);
        return show(deps, kit, request, reply, task_id, { value: read.value, form });
      }
      if (op !== 'check') return show(deps, kit, request, reply, task_id, { value: read.value, form });
      const problems = read.problems.length > 0 ? read.problems : resultProblems(schema, read.value);
      const draft: ResultDraft = { value: read.value, form, problems, ...(read.json === undefined ? {} : { json: read.json }) };
      if (problems.length > 0) {
        return show(
          deps,
          kit,
          request,
          reply,
          task_id,
          draft,
          new AppError('validation_failed', 'The answer does not match the requested schema yet; see the fields.', { details: problems }),
        );
      }
      return showTaskPage(deps, kit, request, reply, task_id, {
        notice: flash('ok', 'The answer matches the requested schema. Deliver it when ready.'),
        result: draft,
      });
    },
  );
}
