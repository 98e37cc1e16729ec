import { answerRoom, sampleAnswer } from '../../domain/answers/sample-answer.js';
import type { AdminTask } from '../../domain/tasks/admin-schemas.js';
import { OWNER } from '../../domain/team/actor.js';
import { isStoreFault } from '../../store/faults.js';
import { listQueue } from '../console/reads.js';
import { patchTask } from '../console/transitions.js';
import type { ServiceDeps } from '../context.js';
import { askQuestion } from '../questions/questions.js';

/**
 * The development profile's stand-in operator (DEV_AUTO_OPERATOR; docs/development.md): every new
 * task is moved on after DEV_AUTO_OPERATOR_DELAY_MS through the same service functions an operator's
 * PATCH uses, so webhooks, mail, receipts and MCP see exactly what a real operator would cause.
 *   accept  → accepted with an ETA an hour away
 *   deliver → accepted, then delivered with a canned answer (valid against its response_schema)
 *   reject  → rejected with a reason that says who rejected it
 *   ask     → a question to the requester; once answered, accepted and delivered as `deliver`
 * Only with DEV_MODE (config refuses it otherwise), so production never runs it. Test tasks
 * (the word "test", contract "Test tasks") are handled like any other, and its notes say it saw one.
 */

const REJECTION = 'Rejected by the development stand-in operator (DEV_AUTO_OPERATOR=reject).';
const QUESTION =
  'The development stand-in operator asks (DEV_AUTO_OPERATOR=ask): is there anything the person doing this task should know? Any answer lets the task go on.';
const DELIVERY = 'Delivered by the development stand-in operator (DEV_AUTO_OPERATOR=deliver): a canned answer, not a person’s.';
const TEST_NOTE = ' This is a test task (the word "test"): the stand-in handles test tasks like any other.';
const TOO_LARGE =
  'Rejected by the development stand-in operator: even the smallest answer valid against this response_schema would not fit in the request body limit (MAX_BODY_BYTES).';

export function startDevOperator(deps: ServiceDeps): () => void {
  const mode = deps.config.dev.autoOperator;
  if (!deps.config.dev.enabled || mode === undefined) return () => undefined;
  const delayMs = deps.config.dev.autoOperatorDelayMs;
  let busy = false;
  const due = (at: string | null | undefined) => at != null && deps.clock.now().getTime() - Date.parse(at) >= delayMs;

  const step = async () => {
    const submitted = await listQueue(deps, { status: 'submitted', order: 'oldest', limit: 50 });
    for (const task of submitted.tasks.filter((t) => due(t.created_at))) {
      if (mode === 'reject') await move(task, { status: 'rejected', operator_notes: withTestNote(task, REJECTION) });
      else if (mode === 'ask' && task.questions.length === 0) await ask(task);
      else if (mode === 'ask' && task.awaiting_answer) continue;
      else await move(task, { status: 'accepted', eta: new Date(deps.clock.now().getTime() + 3_600_000).toISOString() });
    }
    if (mode !== 'deliver' && mode !== 'ask') return;
    const accepted = await listQueue(deps, { status: 'accepted', order: 'oldest', limit: 50 });
    for (const task of accepted.tasks.filter((t) => due(t.accepted_at))) await move(task, cannedDelivery(task, answerRoom(deps.config.limits.maxBodyBytes)));
  };

  const ask = async (task: AdminTask) => {
    try {
      await askQuestion(deps, OWNER, task.task_id, { question: QUESTION });
      deps.log.info({ task_id: task.task_id }, 'dev auto-operator asked a question');
    } catch (error) {
      deps.log.debug({ err: error, task_id: task.task_id }, 'dev auto-operator question skipped');
    }
  };

  const move = async (task: AdminTask, patch: Record<string, unknown>) => {
    try {
      // The stand-in acts as the owner: its steps appear in the audit log like ADMIN_KEY's.
      await patchTask(deps, OWNER, task.task_id, patch);
      deps.log.info({ task_id: task.task_id, status: patch.status }, 'dev auto-operator moved a task');
    } catch (error) {
      // A person (or another step) got there first, or the store is away: the next tick sees the truth.
      deps.log.debug({ err: error, task_id: task.task_id }, 'dev auto-operator step skipped');
    }
  };

  const tick = () => {
    if (busy) return;
    busy = true;
    step()
      .catch((error: unknown) => {
        if (!isStoreFault(error)) deps.log.warn({ err: error }, 'dev auto-operator tick failed');
      })
      .finally(() => {
        busy = false;
      });
  };
  const timer = setInterval(tick, Math.min(Math.max(delayMs / 4, 100), 1000));
  timer.unref();
  deps.log.warn({ mode, delay_ms: delayMs }, 'DEV_AUTO_OPERATOR is on: a stand-in operator answers every task (development only)');
  return () => clearInterval(timer);
}

function withTestNote(task: Pick<AdminTask, 'is_test'>, notes: string): string {
  return task.is_test ? notes + TEST_NOTE : notes;
}

/**
 * The deliver step's PATCH: a schema-valid `result` when the task asked for one (its canonical
 * JSON becomes the notes), else a canned text; a rejection when no answer fits in `maxBytes`.
 */
export function cannedDelivery(task: Pick<AdminTask, 'response_schema' | 'is_test'>, maxBytes: number): Record<string, unknown> {
  if (task.response_schema === null) return { status: 'delivered', operator_notes: withTestNote(task, DELIVERY) };
  const result = sampleAnswer(task.response_schema, maxBytes);
  return result === undefined ? { status: 'rejected', operator_notes: TOO_LARGE } : { status: 'delivered', result };
}
