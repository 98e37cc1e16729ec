import { AWAITING_ANSWER_GUIDE } from '../domain/questions/questions.js';
import { WEBHOOK_WHEN } from '../domain/tasks/callback-url.js';
import { MAX_TOOL_WAIT_SECONDS } from '../services/waiting/task-watch.js';
import { API_VERSION } from '../version.js';

/**
 * How an agent waits for a result without a polling loop, in the few plain sentences every
 * document repeats (llms.txt, api.md, the index, /agent.json): one text, so they cannot disagree.
 */

/** The longest REST hold, in seconds (http/conditional.ts MAX_WAIT_SECONDS). */
const REST_MAX_WAIT = 60;

export function waitingGuide(base: string): string[] {
  const status = `${base}/api/${API_VERSION}/tasks/{task_id}`;
  return [
    `REST long-poll: \`GET ${status}\` answers with an \`ETag\`. Send it back as \`If-None-Match\` together with \`Prefer: wait=${REST_MAX_WAIT}\`: ` +
      `the request is held until the task changes (200 with the task and a new ETag) or ${REST_MAX_WAIT} seconds pass (304, no body; \`Preference-Applied: wait=${REST_MAX_WAIT}\`). ` +
      'Then repeat with the newest ETag. A held request counts as one read. A delivered or rejected task will not change: it is answered at once (304 while your ETag is current), never held.',
    'Conditional poll: `If-None-Match` alone answers 304 at once while nothing changed. Without either, poll every few minutes at most.',
    `MCP: call \`check_task_status\` with \`wait_seconds\` (up to ${MAX_TOOL_WAIT_SECONDS}) and \`known_updated_at\` (the updated_at you last saw): it returns as soon as the task changes, ` +
      'or with the task unchanged when the time is up; call it again the same way.',
    'MCP tasks (protocol revision 2025-11-25): call `submit_human_task` as a task; its taskId is the task_id. `tasks/get` says `working` until the task is delivered or rejected ' +
      '(`completed`), `input_required` while a question of the operator awaits your answer (answer it with `answer_operator_question`), with a `pollInterval` of 1 second, and holds briefly for a change, so an SDK task loop sees an outcome within moments; `tasks/result` returns the final task (`isError` when rejected). `tasks/cancel` withdraws a task nobody accepted yet at once (`cancelled`); ' +
      'for an accepted task it sends the operator a withdrawal request and answers the task unchanged: the operator decides.',
    `Webhooks: add \`callback_url\` (https) to the task and it receives a signed POST \`{type, timestamp, data: the task}\` ${WEBHOOK_WHEN} ` +
      `(Standard Webhooks, v1a Ed25519 signature; keys at ${base}/.well-known/jwks.json): no waiting at all.`,
    `Questions: ${AWAITING_ANSWER_GUIDE.replace('answer_operator_question', '`answer_operator_question`').replace('awaiting_answer', '`awaiting_answer`')}`,
    'Stop once the status is `delivered` or `rejected`: both are final.',
  ];
}

/** The same guide as structured fields, for /agent.json. */
export function waitingBlock(base: string) {
  return {
    rest: {
      endpoint: `${base}/api/${API_VERSION}/tasks/{task_id}`,
      request_headers: { 'If-None-Match': '<the ETag of your last read>', Prefer: `wait=<1-${REST_MAX_WAIT}>` },
      changed: '200 with the task and a new ETag',
      unchanged: '304 with no body after the wait; at once for a delivered or rejected task (final: it will not change)',
      response_headers: ['ETag', 'Preference-Applied'],
    },
    mcp: {
      check_task_status: { wait_seconds: `0-${MAX_TOOL_WAIT_SECONDS}`, known_updated_at: 'the updated_at you last saw' },
      tasks: { tool: 'submit_human_task', task_support: 'optional', task_id_is: 'task_id', protocol_revision: '2025-11-25' },
    },
    webhooks: {
      field: 'callback_url',
      events: ['task.accepted', 'task.delivered', 'task.rejected', 'task.question', 'task.deadline_passed', 'task.approval'],
      body: '{type, timestamp, data: the task as GET returns it}',
      signature: 'webhook-signature: v1a,<base64 Ed25519 over "<webhook-id>.<webhook-timestamp>.<raw body>">',
      keys: `${base}/.well-known/jwks.json`,
    },
    questions: {
      look_for: 'awaiting_answer: true on the task (questions[] holds each question; the open one has answer null)',
      rest: `POST ${base}/api/${API_VERSION}/tasks/{task_id}/questions/{question_id}/answer {answer}`,
      mcp: 'answer_operator_question {task_id, question_id, answer}',
      mcp_tasks: 'tasks/get reports input_required with the question as statusMessage',
    },
    guide: waitingGuide(base).map((line) => line.replace(/`/g, '')),
  };
}
