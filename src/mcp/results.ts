import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AppError, ErrorBody } from '../domain/errors.js';
import type { PublicTask } from '../domain/tasks/schemas.js';
import { awaitingNote } from './questions.js';

/**
 * Tool results. Success: the REST response body as structuredContent and as JSON text. Refusal:
 * `isError: true` with the REST error body (structuredContent and JSON text) and a one-line hint
 * the model can act on — a refusal is a result, never a protocol error.
 */

export function success(body: object): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body as Record<string, unknown>,
  };
}

/**
 * A tool's answer on either revision: check_task_status also says in words when a question of the
 * operator awaits the agent's answer, not only as a field.
 */
export function toolSuccess(name: string, body: object): CallToolResult {
  const result = success(body);
  const note = name === 'check_task_status' ? awaitingNote(body as PublicTask) : undefined;
  if (note) result.content.push({ type: 'text', text: note });
  return result;
}

export function refusal(tool: string, error: AppError): CallToolResult {
  const body = error.toBody();
  return {
    isError: true,
    content: [
      { type: 'text', text: JSON.stringify(body) },
      { type: 'text', text: `Hint: ${hintFor(tool, body)}` },
    ],
    structuredContent: body,
  };
}

function seconds(body: ErrorBody): string {
  const value = body.retry_after_seconds;
  return typeof value === 'number' ? `${value} seconds` : 'the time in retry_after_seconds';
}

/** What the model should do next, per error code. */
export function hintFor(tool: string, body: ErrorBody): string {
  switch (body.error) {
    case 'validation_failed':
      if ([body.message, ...(body.details ?? [])].some((text) => /idempotency/i.test(text) && /already used|different payload|another request/i.test(text))) {
        return 'This idempotency_key was already used with different arguments: use a new idempotency_key for a new task, or resend the original arguments unchanged.';
      }
      return `Fix every field listed in details, then call ${tool} again with the corrected arguments.${
        body.details?.some((d) => /^(contact_email|reply_to)\b/.test(d)) ? ' E-mail addresses must be real mailboxes you can read, not placeholders.' : ''
      }`;
    case 'malformed_request':
      return `Pass the arguments as an object with the documented fields (see details and the tool's inputSchema), then call ${tool} again.`;
    case 'rate_limited':
      if (body.limit === 'status_poll_per_day') {
        return `The no-mailbox path (delivery "status_poll") is used up for today: give a real contact_email with delivery "email" instead, or wait ${seconds(body)}.`;
      }
      return `Per-client limit${typeof body.limit === 'string' ? ` "${body.limit}"` : ''} reached: wait ${seconds(body)} before calling ${tool} again. Do not retry sooner: repeated refusals get this client blocked.`;
    case 'capacity_reached':
      return `The service's daily capacity is used up: try again after ${seconds(body)} (daily windows reset at 00:00 UTC).`;
    case 'duplicate_task':
      return typeof body.existing_task_id === 'string'
        ? `This task was already submitted: do not resubmit. Poll check_task_status with task_id "${body.existing_task_id}" instead.`
        : 'This task was already submitted for this contact_email by another client: do not resubmit. Its task id was e-mailed to that contact address; poll that task.';
    case 'question_not_found':
      return 'No open question has this id on this task: call check_task_status and take the question_id from questions (the one whose answer is null).';
    case 'already_answered':
      return 'This question already has its answer (each question takes one): call check_task_status to see it; answer only questions whose answer is null.';
    case 'task_not_found':
      return 'No task has this id: pass the exact task_id returned by submit_human_task (task-<year>-<32 hex characters>).';
    case 'client_blocked':
      return 'This client is blocked for repeated abuse or by the operator: stop calling these tools; a block from repeated refusals expires on its own.';
    case 'payload_too_large':
      return 'The arguments are too large: shorten the description or message (64 KB at most per request).';
    case 'internal_error':
    case 'service_unavailable':
      return `The service had a problem on its side: wait a few minutes, then call ${tool} again (for submissions, with the same idempotency_key).`;
    default:
      return 'Read the message field and adjust the call accordingly.';
  }
}
