import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { OperatorKeySet } from './approvals.js';
import { HumanTaskClient } from './client.js';
import { HumanTaskError, WaitTimeoutError } from './errors.js';
import type { LogVerdict } from './log.js';
import type { PublicTask } from './types.js';
import type { JSONWebKeySet, ReceiptVerdict, ReceivedFile } from './verify.js';

/**
 * htask: the command line of human-task-client (contract, "Clients"). Human output by default,
 * JSON with --json. Exit codes: 0 done, 1 refused or failed, 2 usage, 3 wait timed out,
 * 4 receipt or webhook signature invalid.
 */

export const EXIT = { done: 0, failed: 1, usage: 2, timedOut: 3, invalid: 4, question: 5 } as const;

const USAGE = `Usage: htask [--base-url URL] [--json] <command> [options]

Commands:
  services                              list the service catalog
  submit [FILE | -] [field flags]       submit a task (JSON file, - for stdin, and/or flags:
                                        --task-type --description --location-required
                                        --location-detail --deadline --output-format
                                        --contact-email --delivery --requester --callback-url)
                                        [--idempotency-key KEY] (generated when absent)
                                        [--schema FILE] (a JSON Schema: ask for a structured
                                        answer, its response_schema)
  status <task_id>                      show a task
  wait <task_id> [--timeout S]          wait until delivered or rejected (long-poll); prints
                                        the structured result when the task has one; returns
                                        early, exit 5, when the operator asks a question
  answer <task_id> <question_id> <text> answer the operator's question
  verify <task_id | receipt> [--files DIR] [--issuer URL] [--jwks-file FILE]
         [--proof FILE] [--vkey KEY | FILE] [--checkpoint FILE [--consistency FILE]]
         [--tsa-ca FILE] [--operator-keys FILE | URL]
                                        verify a receipt (and the files it signs) and its place
                                        in the public log: the tlog-proof, the checkpoint's
                                        signature, the RFC 3161 token (with --tsa-ca, a PEM of
                                        trusted TSA certificates, its chain), and with
                                        --checkpoint (kept earlier) that the log only grew
                                        (a version-3 receipt: each passkey approval against
                                        --operator-keys, else the service's operator keys)
  message --message TEXT --reply-to EMAIL [--from NAME] [--subject TEXT]
                                        send the operator a message
  webhook verify [--headers-file FILE] [--body-file FILE] [--id ID --timestamp TS --signature SIG]
                 [--tolerance S] [--jwks-file FILE]
                                        verify a received webhook: headers from a file ("name: value"
                                        lines or a JSON object) or flags, the raw body from a file
                                        or stdin

Global: --base-url (default $HTASK_BASE_URL, else http://localhost:8080), --json (machine output)
Exit codes: 0 done, 1 refused or failed, 2 usage, 3 wait timed out, 4 receipt or signature invalid, 5 a question awaits your answer
`;

const GLOBAL = { 'base-url': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;
const TASK_FLAGS = {
  'task-type': 'task_type',
  description: 'description',
  'location-detail': 'location_detail',
  deadline: 'deadline',
  'output-format': 'output_format',
  'contact-email': 'contact_email',
  delivery: 'delivery',
  requester: 'requester',
  'callback-url': 'callback_url',
} as const;
const OPTIONS = {
  ...GLOBAL,
  ...Object.fromEntries(Object.keys(TASK_FLAGS).map((flag) => [flag, { type: 'string' }])),
  'location-required': { type: 'boolean' },
  'idempotency-key': { type: 'string' },
  schema: { type: 'string' },
  timeout: { type: 'string' },
  files: { type: 'string' },
  issuer: { type: 'string' },
  'jwks-file': { type: 'string' },
  proof: { type: 'string' },
  vkey: { type: 'string' },
  checkpoint: { type: 'string' },
  'tsa-ca': { type: 'string' },
  consistency: { type: 'string' },
  'operator-keys': { type: 'string' },
  message: { type: 'string' },
  'reply-to': { type: 'string' },
  from: { type: 'string' },
  subject: { type: 'string' },
  'headers-file': { type: 'string' },
  'body-file': { type: 'string' },
  id: { type: 'string' },
  timestamp: { type: 'string' },
  signature: { type: 'string' },
  tolerance: { type: 'string' },
} as const;

/** Which options (beyond the global ones) and how many positionals each command takes. */
const COMMANDS: Record<string, { options: string[]; positionals: [number, number] }> = {
  services: { options: [], positionals: [0, 0] },
  submit: { options: [...Object.keys(TASK_FLAGS), 'location-required', 'idempotency-key', 'schema'], positionals: [0, 1] },
  status: { options: [], positionals: [1, 1] },
  wait: { options: ['timeout'], positionals: [1, 1] },
  verify: { options: ['files', 'issuer', 'jwks-file', 'proof', 'vkey', 'checkpoint', 'consistency', 'tsa-ca', 'operator-keys'], positionals: [1, 1] },
  message: { options: ['message', 'reply-to', 'from', 'subject'], positionals: [0, 0] },
  webhook: { options: ['headers-file', 'body-file', 'id', 'timestamp', 'signature', 'tolerance', 'jwks-file'], positionals: [1, 1] },
  answer: { options: [], positionals: [3, 3] },
};

class UsageError extends Error {}

export interface Io {
  out(text: string): void;
  err(text: string): void;
  stdin(): string;
  /** Whether stderr is a terminal (progress redraws one line instead of printing one per change). */
  tty: boolean;
  env: Record<string, string | undefined>;
}

const nodeIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  stdin: () => readFileSync(0, 'utf8'),
  tty: process.stderr.isTTY === true,
  env: process.env,
};

export async function run(argv: string[], io: Io = nodeIo): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    io.err(`htask: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(USAGE);
    return EXIT.done;
  }
  const [command, ...args] = positionals;
  const spec = command === undefined ? undefined : COMMANDS[command];
  const json = values.json === true;
  try {
    if (command === undefined || spec === undefined) throw new UsageError(command === undefined ? 'no command given' : `unknown command ${command}`);
    const stray = Object.keys(values).filter((name) => !(name in GLOBAL) && !spec.options.includes(name));
    if (stray.length > 0) throw new UsageError(`${command} does not take --${stray.join(', --')}`);
    if (args.length < spec.positionals[0] || args.length > spec.positionals[1])
      throw new UsageError(
        `${command} takes ${spec.positionals[1] === 0 ? 'no arguments' : spec.positionals[0] === spec.positionals[1] ? (spec.positionals[0] === 1 ? 'one argument' : `${spec.positionals[0]} arguments`) : 'at most one argument'}`,
      );
    const client = new HumanTaskClient({
      baseUrl: values['base-url'] ?? io.env.HTASK_BASE_URL ?? 'http://localhost:8080',
      ...(values.issuer === undefined ? {} : { issuer: values.issuer }),
      ...(values['jwks-file'] === undefined ? {} : { jwks: JSON.parse(readFileSync(values['jwks-file'], 'utf8')) as JSONWebKeySet }),
    });
    const print = (value: unknown, human: string) => io.out(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);
    switch (command) {
      case 'services':
        return await services(client, json, io);
      case 'submit': {
        const input = taskInput(args[0], values, io);
        const key = values['idempotency-key'];
        const submitted = await client.submitTask(input as Parameters<HumanTaskClient['submitTask']>[0], key === undefined ? {} : { idempotencyKey: key });
        print(
          submitted,
          `Submitted ${submitted.task_id} (${submitted.status}).\n  status:          ${submitted.status_url}\n  page:            ${submitted.status_page}\n  idempotency key: ${submitted.idempotency_key}\n${submitted.message}`,
        );
        return EXIT.done;
      }
      case 'status': {
        const task = await client.getTask(String(args[0]));
        print(task, describeTask(task));
        return EXIT.done;
      }
      case 'wait':
        return await wait(client, String(args[0]), values.timeout, json, io);
      case 'verify':
        return await verify(client, String(args[0]), values, json, io);
      case 'answer': {
        const [taskId, questionId, text] = args.map(String) as [string, string, string];
        const task = await client.answerQuestion(taskId, questionId, text);
        print(task, `Answered ${questionId}.\n${describeTask(task)}`);
        return EXIT.done;
      }
      case 'message': {
        if (values.message === undefined || values['reply-to'] === undefined) throw new UsageError('message needs --message and --reply-to');
        const body: Record<string, string> = { message: values.message, reply_to: values['reply-to'] };
        if (values.from !== undefined) body.from = values.from;
        if (values.subject !== undefined) body.subject = values.subject;
        const sent = await client.sendMessage(body as Parameters<HumanTaskClient['sendMessage']>[0]);
        print(sent, `Sent ${sent.message_id}. ${sent.message}`);
        return EXIT.done;
      }
      case 'webhook':
        if (args[0] !== 'verify') throw new UsageError('webhook takes one subcommand: verify');
        return await verifyWebhookCommand(client, values, json, io);
    }
    return EXIT.usage;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`htask: ${error.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    return refusal(error, json, io);
  }
}

function taskInput(source: string | undefined, values: Record<string, unknown>, io: Io): Record<string, unknown> {
  let input: Record<string, unknown> = {};
  if (source !== undefined) {
    const text = source === '-' ? io.stdin() : readFileSync(source, 'utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UsageError(`${source === '-' ? 'stdin' : source} is not JSON`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('the task must be a JSON object');
    input = parsed as Record<string, unknown>;
  }
  for (const [flag, field] of Object.entries(TASK_FLAGS)) if (typeof values[flag] === 'string') input[field] = values[flag];
  if (values['location-required'] === true) input.location_required = true;
  if (typeof values.schema === 'string') input.response_schema = jsonObjectFile(values.schema, 'the schema');
  if (Object.keys(input).length === 0) throw new UsageError('submit needs a JSON file, - for stdin, or field flags');
  return input;
}

function jsonObjectFile(file: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new UsageError(`${file} is not a readable JSON file`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`${what} must be a JSON object`);
  return parsed as Record<string, unknown>;
}

/** A structured result as indented `name: value` lines, nested objects and arrays one level deeper. */
function resultLines(value: unknown, indent: string): string[] {
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [`- ${i + 1}`, v]) : Object.entries(value as Record<string, unknown>);
  return entries.flatMap(([key, v]) =>
    typeof v === 'object' && v !== null
      ? [`${indent}${key}:`, ...resultLines(v, `${indent}  `)]
      : [`${indent}${key}: ${typeof v === 'string' ? v : JSON.stringify(v)}`],
  );
}

async function services(client: HumanTaskClient, json: boolean, io: Io): Promise<number> {
  const all = [];
  for await (const entry of client.listServices()) all.push(entry);
  if (json) io.out(`${JSON.stringify(all, null, 2)}\n`);
  else for (const s of all) io.out(`${s.task_type.padEnd(36)} ${s.title}${s.estimated_response_time ? ` (${s.estimated_response_time})` : ''}\n`);
  return EXIT.done;
}

function describeTask(task: PublicTask): string {
  const lines = [`${task.task_id}: ${task.status}`, `  type:     ${task.task_type}`, `  updated:  ${task.updated_at}`];
  if (task.eta) lines.push(`  eta:      ${task.eta}`);
  // A structured answer is shown as its fields; its operator_notes are the same data as canonical JSON.
  if (task.result !== null) lines.push('  result:', ...resultLines(task.result, '    '));
  else if (task.operator_notes !== null) lines.push(`  ${task.status === 'rejected' ? 'reason:  ' : 'notes:   '} ${task.operator_notes}`);
  if (task.receipt) lines.push(`  receipt:  ${task.receipt}`);
  for (const q of task.questions ?? []) {
    lines.push(`  question: ${q.question_id} ${q.answer === null ? '(awaiting your answer)' : `(answered ${q.answered_at ?? ''})`}`, `    ${q.question}`);
    if (q.answer !== null) lines.push(`    answer: ${q.answer}`);
  }
  if (task.awaiting_answer) lines.push(`  answer it: htask answer ${task.task_id} <question_id> "<your answer>"`);
  return lines.join('\n');
}

async function wait(client: HumanTaskClient, taskId: string, timeout: string | undefined, json: boolean, io: Io): Promise<number> {
  if (timeout !== undefined && !/^\d+(\.\d+)?$/.test(timeout)) throw new UsageError('--timeout takes seconds');
  let lastLine = '';
  const task = await client
    .waitForResult(taskId, {
      ...(timeout === undefined ? {} : { timeoutMs: Number(timeout) * 1000 }),
      onProgress: ({ status, eta, elapsedMs }) => {
        // The progress line goes to stderr so stdout stays the result (and pure JSON with --json).
        const line = `${taskId}: ${status}${eta ? `, ETA ${eta}` : ''}, waited ${formatDuration(elapsedMs)}`;
        if (io.tty) io.err(`\r${line}\u001b[K`);
        else if (line.replace(/waited .*/, '') !== lastLine.replace(/waited .*/, '')) io.err(`${line}\n`);
        lastLine = line;
      },
    })
    .catch((error: unknown) => {
      if (io.tty && lastLine) io.err('\n');
      throw error;
    });
  if (io.tty) io.err('\n');
  io.out(json ? `${JSON.stringify(task, null, 2)}\n` : `${describeTask(task)}\n`);
  if (task.awaiting_answer && task.status !== 'delivered' && task.status !== 'rejected') return EXIT.question;
  return task.status === 'delivered' ? EXIT.done : EXIT.failed;
}

function readFiles(dir: string): ReceivedFile[] {
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--files ${dir} is not a directory`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => ({ name: entry.name, data: readFileSync(path.join(dir, entry.name)) }));
}

async function verify(client: HumanTaskClient, subject: string, values: Record<string, unknown>, json: boolean, io: Io): Promise<number> {
  const file = (name: string) => (typeof values[name] === 'string' ? readFileSync(values[name] as string, 'utf8') : undefined);
  const filesDir = values.files as string | undefined;
  const files = filesDir === undefined ? undefined : readFiles(filesDir);
  const operatorKeys = await operatorKeysOption(values['operator-keys'] as string | undefined);
  const verdict: ReceiptVerdict = await client.verifyReceipt(subject.trim(), {
    ...(files === undefined ? {} : { files }),
    ...(operatorKeys === undefined ? {} : { operatorKeys }),
  });
  // The public log: a receipt not integrated yet (404, seconds after delivery) is said, not failed.
  const vkeyArg = values.vkey as string | undefined;
  const logOptions = {
    ...(values.proof === undefined ? {} : { proof: file('proof') as string }),
    ...(vkeyArg === undefined ? {} : { vkey: vkeyArg.includes('+') ? vkeyArg : readFileSync(vkeyArg, 'utf8') }),
    ...(values.checkpoint === undefined ? {} : { olderCheckpoint: file('checkpoint') as string }),
    ...(values.consistency === undefined ? {} : { consistency: file('consistency') as string }),
    ...(values['tsa-ca'] === undefined ? {} : { tsaCa: file('tsa-ca') as string }),
  };
  let log: LogVerdict | undefined;
  let logNote: string | undefined;
  if (values['jwks-file'] !== undefined && values.proof === undefined) {
    // Offline (keys from a file): fetch nothing; the log is checked only from files.
    logNote = 'public log not checked offline: pass --proof and --vkey';
  } else {
    try {
      log = await client.verifyReceiptLog(subject.trim(), logOptions);
    } catch (error) {
      if (!(error instanceof HumanTaskError) || error.status !== 404) throw error;
      logNote = 'public log not checked: no proof yet (a receipt is logged within seconds of delivery)';
    }
  }
  const valid = verdict.valid && (log?.valid ?? true);
  if (json) io.out(`${JSON.stringify({ ...verdict, valid, log: log ?? null }, null, 2)}\n`);
  else {
    for (const check of [...verdict.checks, ...(log?.checks ?? [])]) io.out(`  ${check.ok ? '✓' : '✗'} ${check.name.padEnd(16)}${check.detail}\n`);
    if (logNote) io.out(`  (${logNote})\n`);
    for (const approval of verdict.approvals) io.out(`  approval        ${approval.detail}${approval.at === null ? '' : `, at ${approval.at}`}\n`);
    const p = verdict.payload;
    io.out(
      valid
        ? `VALID: signed by ${client.issuer} (key ${verdict.kid ?? '?'}) for ${p?.task_id ?? '?'}, delivered ${p?.timeline.delivered_at ?? '?'}.\n`
        : `INVALID (${verdict.failure ?? log?.failure ?? '?'}): this receipt does not verify.\n`,
    );
  }
  return valid ? EXIT.done : EXIT.invalid;
}

/** --operator-keys: a file, or a URL fetched (an operator-keys.json kept or mirrored elsewhere). */
async function operatorKeysOption(source: string | undefined): Promise<OperatorKeySet | undefined> {
  if (source === undefined) return undefined;
  let text: string;
  if (/^https?:\/\//.test(source)) {
    const res = await fetch(source, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(15_000) });
    if (!res.ok) throw new UsageError(`--operator-keys ${source} answered ${res.status}`);
    text = await res.text();
  } else {
    text = readFileSync(source, 'utf8');
  }
  let keys: unknown;
  try {
    keys = JSON.parse(text);
  } catch {
    keys = null;
  }
  if (typeof keys !== 'object' || keys === null || !Array.isArray((keys as OperatorKeySet).keys))
    throw new UsageError(`--operator-keys ${source} is not {keys: [{key_id, jwk, since, until}]}`);
  return keys as OperatorKeySet;
}

/** `name: value` lines (a saved request; the request line and blank lines are skipped) or a JSON object. */
function parseHeaders(text: string): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new UsageError('--headers-file is neither JSON nor "name: value" lines');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--headers-file must hold a JSON object');
    return Object.fromEntries(Object.entries(parsed).map(([name, value]) => [name.toLowerCase(), String(value)]));
  }
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || /\s/.test(line.slice(0, colon))) continue;
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

async function verifyWebhookCommand(client: HumanTaskClient, values: Record<string, unknown>, json: boolean, io: Io): Promise<number> {
  const text = (flag: string) => (typeof values[flag] === 'string' ? (values[flag] as string) : undefined);
  const headersFile = text('headers-file');
  const headers = headersFile === undefined ? {} : parseHeaders(readFileSync(headersFile, 'utf8'));
  for (const name of ['id', 'timestamp', 'signature']) {
    const value = text(name);
    if (value !== undefined) headers[`webhook-${name}`] = value;
  }
  if (!headers['webhook-id'] || !headers['webhook-timestamp'] || !headers['webhook-signature'])
    throw new UsageError('webhook verify needs webhook-id, webhook-timestamp and webhook-signature (--headers-file, or --id --timestamp --signature)');
  const tolerance = text('tolerance');
  if (tolerance !== undefined && !/^\d+$/.test(tolerance)) throw new UsageError('--tolerance takes whole seconds');
  const bodyFile = text('body-file');
  // The raw body, byte for byte: the signature covers it exactly as it was sent.
  const body = bodyFile === undefined ? io.stdin() : readFileSync(bodyFile, 'utf8');
  const verdict = await client.verifyWebhook({ headers, body }, tolerance === undefined ? {} : { toleranceSeconds: Number(tolerance) });
  if (json) io.out(`${JSON.stringify(verdict, null, 2)}\n`);
  else {
    io.out(`  ${verdict.valid ? '✓' : '✗'} ${(verdict.failure ?? 'signature').padEnd(12)}${verdict.detail}\n`);
    const data = verdict.event?.data as { task_id?: unknown; status?: unknown } | undefined;
    if (verdict.event) io.out(`  event       ${verdict.event.type} for ${String(data?.task_id)} (${String(data?.status)}) at ${verdict.event.timestamp}\n`);
    const keys = text('jwks-file') ?? `${client.baseUrl}/.well-known/jwks.json`;
    io.out(verdict.valid ? `VALID: signed by a key of ${keys}.\n` : `INVALID (${verdict.failure ?? '?'}): do not act on this webhook (keys from ${keys}).\n`);
  }
  return verdict.valid ? EXIT.done : EXIT.invalid;
}

function refusal(error: unknown, json: boolean, io: Io): number {
  if (error instanceof WaitTimeoutError) {
    const task = error.task as PublicTask | undefined;
    if (json) io.out(`${JSON.stringify({ error: 'wait_timeout', message: error.message, task: task ?? null }, null, 2)}\n`);
    else io.err(`htask: ${error.message}\n`);
    return EXIT.timedOut;
  }
  if (error instanceof HumanTaskError) {
    const body = error.body ?? { error: error.code, message: error.message };
    if (json) io.out(`${JSON.stringify(body, null, 2)}\n`);
    else io.err(`${JSON.stringify(body)}\n`);
    if (error.retryAfterSeconds !== undefined) {
      const at = new Date(Date.now() + error.retryAfterSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      io.err(`Retry after ${error.retryAfterSeconds} s (at ${at}).\n`);
    }
    return EXIT.failed;
  }
  io.err(`htask: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT.failed;
}

function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
