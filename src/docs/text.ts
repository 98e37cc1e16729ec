import { ERROR_STATUS } from '../domain/errors.js';
import type { Block } from '../domain/markup.js';
import { PLACEHOLDER_DOMAINS, PLACEHOLDER_TLDS } from '../domain/network/email.js';
import { ANSWER_MAX, ANSWER_MIN, AWAITING_ANSWER_GUIDE } from '../domain/questions/questions.js';
import { WEBHOOK_WHEN } from '../domain/tasks/callback-url.js';
import { messageInputSchema, PublicAttachmentSchema, PublicTaskSchema, taskInputSchema } from '../domain/tasks/schemas.js';
import { TASK_TYPES } from '../domain/tasks/task.js';
import { MCP_REVISIONS_NOTE } from '../mcp/revisions.js';
import type { ServiceDeps } from '../services/context.js';
import { API_VERSION, SERVICE_VERSION } from '../version.js';
import { structuredAnswerBlocks, structuredAnswerLines } from './answers.js';
import { CLIENTS_SUMMARY, clientLines } from './clients.js';
import { PRODUCT_NAME, summary } from './documents.js';
import { DOCUMENTS, endpoints, MCP_TOOLS } from './endpoints.js';
import { publicLimits } from './limits.js';
import { STATUS_DESCRIPTIONS } from './openapi.js';
import { waitingGuide } from './waiting.js';

/** llms.txt, index.md and api.md, from the same sources as the JSON documents. */

type Json = Record<string, unknown>;

/** A JSON Schema property's type, as a reader wants it: `string (email)`, `one of a, b`, `string or null`. */
function typeOf(schema: Json): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(typeOf).join(' or ');
  if (schema.type === 'null') return 'null';
  if (schema.type === 'array') return `array of ${typeOf((schema.items as Json | undefined) ?? {})}`;
  const type = typeof schema.type === 'string' ? schema.type : 'any';
  const nullable = schema.nullable === true ? ' or null' : '';
  return `${type}${typeof schema.format === 'string' ? ` (${schema.format})` : ''}${nullable}`;
}

function rules(schema: Json): string {
  const out: string[] = [];
  const inner = Array.isArray(schema.anyOf) ? ((schema.anyOf as Json[]).find((s) => s.type !== 'null') ?? schema) : schema;
  if (typeof inner.minLength === 'number' && typeof inner.maxLength === 'number') out.push(`${inner.minLength}–${inner.maxLength} characters`);
  else if (typeof inner.maxLength === 'number') out.push(`max ${inner.maxLength} characters`);
  if (typeof inner.minimum === 'number' && typeof inner.maximum === 'number') out.push(`${inner.minimum} to ${inner.maximum}`);
  if (inner.deprecated === true || schema.deprecated === true) out.push('deprecated');
  return out.join('; ');
}

/** A fields table of an object schema: field, type, required, rules, description. */
export function fieldsTable(schema: Json): Block {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return {
    table: {
      head: ['field', 'type', 'required', 'rules', 'description'],
      rows: Object.entries(props).map(([name, p]) => [
        `\`${name}\``,
        typeOf(p),
        required.has(name) ? 'yes' : 'no',
        rules(p),
        typeof p.description === 'string' ? p.description : '',
      ]),
    },
  };
}

/**
 * llms.txt (llmstxt.org): an H1, a blockquote summary, a few paragraphs, then H2 sections of
 * links, each link's note stating the rule an agent trips over if it does not know it. Other
 * parts of the service add their sentences to the sections "Waiting for a result" and "Verify a receipt".
 */
export function llmsTxt(deps: ServiceDeps): string {
  const base = deps.config.baseUrl;
  const e = endpoints(base);
  const l = deps.config.limits;
  const api = `${base}/api/${API_VERSION}`;
  const full = `${base}/llms-full.txt`;
  const ref = `${base}/api.md`;
  const per = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  const placeholders = [...PLACEHOLDER_DOMAINS.filter((d) => d !== 'localhost'), ...PLACEHOLDER_TLDS.map((t) => `*.${t}`), 'localhost'].join(', ');
  const example = {
    task_type: 'real_world_verification',
    description: 'Check whether the bakery at 12 Main Street, Springfield is open on Sunday mornings.',
    location_required: true,
    location_detail: 'Springfield, Main Street',
    delivery: 'status_poll',
  };
  const lines = [
    `# ${PRODUCT_NAME}`,
    '',
    `> ${summary(deps)}`,
    '',
    'Submitting is asynchronous: POST a task, keep the task_id (it is the only key to the task: keep it private), then wait for the result (see "Waiting for a result"). ' +
      'A human reviews every task; illegal, harmful, deceptive, unsafe or privacy-invasive requests are rejected whatever their type. Never send payment details or credentials.',
    '',
    `Retention: contact e-mails, callback URLs, message texts and attachments are erased ${deps.config.retention.days} days after a task is delivered or rejected (messages ${deps.config.retention.days} days after they arrive); the task record and its receipt stay verifiable.`,
    '',
    `Task types: ${TASK_TYPES.join(', ')}.`,
    '',
    `A request the service accepts as written (the result appears in operator_notes; to get it by e-mail instead, give your own real mailbox as contact_email and drop delivery): \`POST ${e.submit_task.url}\` with \`Content-Type: application/json\` and \`${JSON.stringify(example)}\``,
    '',
    '## API',
    '',
    `- [Submit a task](${e.submit_task.url}): POST JSON {task_type, description, contact_email | delivery: "status_poll", ...}; 202 with task_id, status_url and a Location header; optional Idempotency-Key header`,
    `- [Dry run](${e.submit_task.url}?dry_run=true): POST the same body with ?dry_run=true: every check a submission runs (validation, e-mail and MX, limits, duplicates, blocks, caps), nothing created or sent and no quota used (it counts as a read); 200 {dry_run: true, would_accept: true, limits} or the very error the submission would get`,
    `- [Coverage](${e.coverage.url}): GET, before you ask: per task type, time to seen, accepted and delivered (p50/p90 seconds over the last 30 days), acceptance rate and deliveries; whether tasks are taken now, operators on duty, open tasks`,
    `- [Task status](${api}/tasks/TASK_ID): GET; status, status_history, eta, operator_notes, and once delivered the receipt and attachments`,
    `- [Delivered file](${api}/tasks/TASK_ID/attachments/ATTACHMENT_ID): GET, once delivered; each file in attachments[] has name, media_type, size, sha256 and this url. ` +
      'Check a file: SHA-256 of the downloaded bytes equals its sha256 (also in the Content-Digest header), and the receipt (receipt_version 2) signs every sha256.',
    `- [Preview of a delivered image](${api}/tasks/TASK_ID/attachments/ATTACHMENT_ID/thumbnail): GET; a small WebP preview of an image attachment`,
    `- [Message the operator](${e.send_message.url}): POST JSON {message, reply_to, from?, subject?}; 201 with message_id and a thread_token (shown once)`,
    `- [Read the operator's replies](${api}/messages/MESSAGE_ID): GET with Authorization: Bearer <thread_token>; the replies to your message, oldest first`,
    `- [Answer the operator's question](${api}/tasks/TASK_ID/questions/QUESTION_ID/answer): POST JSON {answer}; when the task shows awaiting_answer true, for the question whose answer is null`,
    `- [Withdraw a task](${api}/tasks/TASK_ID/cancel): POST, no body. A submitted task nobody accepted is withdrawn at once: 202 with status rejected and the reason "Withdrawn at the requester's request." (the operator is told). An accepted task: the operator gets a withdrawal request (a message naming the task, with the message limits); 202 with the unchanged status: the operator decides. A delivered or rejected task: 409 invalid_transition`,
    `- [My tasks](${api}/tasks): GET ?limit=&cursor=&status=, signed (Web Bot Auth: Signature, Signature-Input, Signature-Agent naming your key directory); your own tasks, newest update first; unsigned: 400 signature_required. A signed agent is counted by its key, with limits of its own (${ref}#verified-agents)`,
    `- [Services catalog](${e.services.url}): GET ?limit=1-${l.servicesPageMax}&cursor=; pass next_cursor back until it is null`,
    `- [MCP server](${e.mcp.url}): streamable HTTP, stateless, no auth; tools ${MCP_TOOLS.map((t) => t.name).join(', ')}; same fields, limits and errors as REST. ${MCP_REVISIONS_NOTE}`,
    '',
    '## Rules',
    '',
    `- [Per-client limits](${ref}#limits): ${per(l.tasksPerHour, 'task')} per hour and ${l.tasksPerDay} per day; ${per(l.messagesPerHour, 'message')} per hour and ${l.messagesPerDay} per day; ${per(l.statusPollPerDay, 'task')} with delivery status_poll per day; ${l.readsPerMinute} reads per minute. Over a limit: 429 rate_limited with Retry-After (seconds); daily windows reset at 00:00 UTC. Every response carries RateLimit-Policy; reads and successful submissions also RateLimit-Limit, -Remaining and -Reset`,
    `- [Automatic blocking](${ref}#errors): a client refused with 429 ${l.autoBlockRefusals} times within 24 hours is blocked for ${l.autoBlockHours} hours (403 client_blocked). After a 429, wait Retry-After seconds; never retry in a loop`,
    `- [Contact e-mail checks](${ref}#submit-a-task): contact_email must be a real mailbox you read. Placeholder domains are refused (${placeholders}), and the domain must accept mail (an MX record, or an A/AAAA record): 422 validation_failed otherwise. No mailbox? Use delivery "status_poll"`,
    `- [JSON bodies only](${ref}#errors): send bodies as Content-Type: application/json, at most ${l.maxBodyBytes} bytes (415 unsupported_media_type, 413 payload_too_large otherwise). Unknown fields are ignored and listed in warnings; every field error is reported at once in details`,
    `- [Duplicates](${ref}#errors): the same task_type and description from the same client or for the same contact_email within ${l.duplicateWindowHours} hours is 409 duplicate_task: poll the task you have instead of resubmitting (existing_task_id names it when you sent it)`,
    `- [Statuses](${ref}#the-task-as-returned): submitted → accepted → delivered, or rejected (operator_notes gives the reason). delivered and rejected are final: stop waiting then`,
    `- [Test tasks](${ref}#submit-a-task): to try the service, submit one small task and mark it: put the word "test" in its description or requester. The operator sees it marked as a test`,
    '',
    ...structuredAnswerLines(base),
    '## Waiting for a result',
    '',
    ...waitingGuide(base).map((line) => waitingLink(line, `${api}/tasks/TASK_ID`, e.mcp.url, e.submit_task.url)),
    '',
    '## Verify a receipt',
    '',
    `- [Receipt signing keys (JWKS)](${base}/.well-known/jwks.json): a delivered task carries receipt, a compact JWS (EdDSA, Ed25519); pick the key by the kid in its header. Its payload binds task_id, deliverable_sha256 (SHA-256 hex of operator_notes as returned) and the timeline; retired keys stay published`,
    `- [Status page](${base}/tasks?id=TASK_ID): shows the receipt and how to check it, for people`,
    `- [Receipt inclusion proof](${api}/tasks/TASK_ID/receipt-proof): GET; the proof (C2SP tlog-proof, text/plain) that the task's receipt is in the public receipt log; 404 until the receipt is integrated`,
    '',
    '## Documents',
    '',
    `- [Full reference in one file](${full}): this guide, the overview and the whole API reference (every field, error, header and endpoint) in one plain-text file`,
    ...DOCUMENTS.filter((d) => d.id !== 'llms' && d.id !== 'llms-full').map((d) => `- [${d.title}](${base}${d.path}): ${d.description}`),
    '',
    '## Clients',
    '',
    ...clientLines(),
    CLIENTS_SUMMARY,
    '',
    '## Optional',
    '',
    `- [Human pages](${base}/docs): the same documents for people`,
    `- [Home page](${base}/): what the service is, with a submission form`,
    '',
  ];
  return lines.join('\n');
}

/**
 * A line of the waiting guide (docs/waiting.ts) as an llms.txt link item: the link names where to
 * do it (the MCP server, the task status endpoint, or submission for webhooks), the note is the
 * guide's sentence.
 */
function waitingLink(line: string, statusUrl: string, mcpUrl: string, submitUrl: string): string {
  const text = line.replace(/`/g, '');
  const [label, url] = /^MCP tasks/.test(text)
    ? ['MCP tasks', mcpUrl]
    : /^MCP/.test(text)
      ? ['MCP check_task_status', mcpUrl]
      : /^REST long-poll/.test(text)
        ? ['Long-poll the task status', statusUrl]
        : /^Conditional/.test(text)
          ? ['Conditional poll', statusUrl]
          : /^Webhooks/.test(text)
            ? ['Webhooks (callback_url)', submitUrl]
            : /^Questions/.test(text)
              ? ['Answer the operator', statusUrl]
              : ['Task status', statusUrl];
  return `- [${label}](${url}): ${text}`;
}

/** /llms-full.txt: llms.txt, the overview and the API reference, in one file for a model's context. */
export function llmsFullTxt(llms: string, overview: string, reference: string): string {
  return [llms.trimEnd(), '', '---', '', overview.trimEnd(), '', '---', '', reference.trimEnd(), ''].join('\n');
}

export function indexDoc(deps: ServiceDeps): Block[] {
  const base = deps.config.baseUrl;
  const p = deps.profile;
  const limits = deps.config.limits;
  return [
    { h: 1, text: PRODUCT_NAME },
    { quote: summary(deps) },
    { h: 2, text: 'What it does' },
    {
      list: [
        'A client — usually an AI agent — submits a task that needs a human: physical presence, human perception or human judgment.',
        `The operator reviews every task before accepting it (target: within ${p.response_target_hours} hours), performs the accepted ones and delivers the result.`,
        'Results arrive by e-mail to `contact_email` (default), or as text in `operator_notes` of the status response when `delivery` is `status_poll`.',
        'Each delivery carries a receipt: a JWS signed with Ed25519 that binds the deliverable and the timeline to the task id.',
        'Evidence (photos, videos, documents) comes as `attachments`: each file with its SHA-256, all signed into the receipt; photo metadata (EXIF, GPS) is removed unless the task has `location_required`.',
      ],
    },
    { h: 2, text: 'Services' },
    { list: deps.catalog.map((s) => `**${s.title}** (\`${s.task_type}\`): ${s.description}`) },
    { h: 2, text: 'Policy' },
    { p: p.policy.review },
    { p: 'The operator will not do:' },
    { list: p.policy.will_not_do },
    { p: p.policy.privacy },
    { h: 2, text: 'The operator' },
    {
      list: [
        `Name: ${p.operator.name}`,
        `Role: ${p.operator.role}`,
        `Languages: ${p.operator.languages.join(', ')}`,
        `Service area: ${p.operator.service_area}`,
        `Working hours: ${p.operator.working_hours}`,
        `Time zone: ${p.operator.timezone}`,
      ],
    },
    { h: 2, text: 'How agents use it' },
    {
      list: [
        `**REST**: \`POST ${base}/api/${API_VERSION}/tasks\` with a JSON task, then poll \`GET ${base}/api/${API_VERSION}/tasks/{task_id}\`. See [api.md](${base}/api.md) and [openapi.json](${base}/openapi.json).`,
        `**Webhooks**: add \`callback_url\` to the task and receive a signed POST ${WEBHOOK_WHEN}, instead of polling (see api.md).`,
        `**MCP**: streamable HTTP at \`${base}/mcp\`, no authentication; tools ${MCP_TOOLS.map((t) => `\`${t.name}\``).join(', ')}. Server card: [/.well-known/mcp](${base}/.well-known/mcp).`,
        `**Documents**: [agent.json](${base}/agent.json) (everything in one file), [llms.txt](${base}/llms.txt), [capabilities](${base}/.well-known/capabilities.json), [services](${base}/.well-known/services.json), [human.json](${base}/.well-known/human.json).`,
        `**People**: the form on [the home page](${base}/) creates the same task; [the status page](${base}/tasks) shows its progress.`,
      ],
    },
    { h: 2, text: 'Waiting for a result' },
    { list: waitingGuide(base) },
    { h: 2, text: 'Pricing and limits' },
    {
      list: [
        'Free during the pilot; `budget_usd` is accepted and ignored. The service never asks for payment or credentials.',
        `Per client: ${limits.tasksPerHour} tasks per hour and ${limits.tasksPerDay} per day; ${limits.messagesPerHour} messages per hour and ${limits.messagesPerDay} per day; ${limits.statusPollPerDay} ${limits.statusPollPerDay === 1 ? 'task' : 'tasks'} with delivery \`status_poll\` per day.`,
        'Daily windows reset at 00:00 UTC. Over a limit: 429 with `Retry-After`. One small test task is fine: mark it with the word "test" (whole word, any case) in the description or requester; the submission `message` confirms it was recognized.',
      ],
    },
    { p: `Version ${SERVICE_VERSION}, API ${API_VERSION}.` },
  ];
}

function errorCodesTable(): Block {
  const extra: Record<string, string> = {
    malformed_request: '`details`',
    validation_failed: '`details`',
    duplicate_task: '`existing_task_id`',
    invalid_transition: '`from`, `to`',
    rate_limited: '`limit`, `retry_after_seconds`',
    capacity_reached: '`retry_after_seconds`',
  };
  return {
    table: {
      head: ['HTTP', 'error', 'extra fields'],
      rows: Object.entries(ERROR_STATUS).map(([code, status]) => [String(status), `\`${code}\``, extra[code] ?? '']),
    },
  };
}

function limitsTable(deps: ServiceDeps): Block {
  const flat: string[][] = [];
  const walk = (prefix: string, value: unknown) => {
    if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix}.${k}` : k, v);
    else flat.push([`\`${prefix}\``, String(value)]);
  };
  walk('', publicLimits(deps.config));
  return { table: { head: ['limit', 'value'], rows: flat } };
}

function operationBlocks(openapi: Json): Block[] {
  const blocks: Block[] = [];
  const paths = (openapi.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      blocks.push({ h: 3, text: `${method.toUpperCase()} ${path}` });
      const lead = [op.summary, op.description]
        .filter((s): s is string => typeof s === 'string')
        .join('. ')
        .replace(/\.\./g, '.');
      if (lead) blocks.push({ p: lead });
      if (Array.isArray(op.security) && op.security.length > 0) blocks.push({ p: 'Needs `Authorization: Bearer <ADMIN_KEY>` (operator only).' });
      const params = (op.parameters ?? []) as Json[];
      if (params.length > 0) {
        blocks.push({
          table: {
            head: ['parameter', 'in', 'type', 'required', 'description'],
            rows: params.map((p) => [
              `\`${String(p.name)}\``,
              String(p.in),
              typeOf((p.schema as Json | undefined) ?? {}),
              p.required ? 'yes' : 'no',
              typeof p.description === 'string' ? p.description : '',
            ]),
          },
        });
      }
      const responses = (op.responses ?? {}) as Record<string, Json>;
      blocks.push({
        table: {
          head: ['status', 'meaning', 'headers'],
          rows: Object.entries(responses).map(([code, r]) => [
            code,
            String(r.description ?? STATUS_DESCRIPTIONS[code] ?? ''),
            Object.keys((r.headers ?? {}) as Json)
              .map((h) => `\`${h}\``)
              .join(', '),
          ]),
        },
      });
    }
  }
  return blocks;
}

export function apiDoc(deps: ServiceDeps, openapi: Json): Block[] {
  const base = deps.config.baseUrl;
  const limits = deps.config.limits;
  return [
    { h: 1, text: `${PRODUCT_NAME} — API reference` },
    {
      p: `Base URL \`${base}\`. JSON in, JSON out (\`Content-Type: application/json\`), bodies up to ${limits.maxBodyBytes} bytes. No authentication on the public endpoints: send no Authorization header. CORS is enabled. Version ${SERVICE_VERSION}; every endpoint lives under \`/api/${API_VERSION}/\`. Machine-readable: [openapi.json](${base}/openapi.json).`,
    },
    { h: 2, text: 'Submit a task' },
    {
      p: `\`POST ${base}/api/${API_VERSION}/tasks\` → 202 with \`task_id\`, \`status_url\`, \`status_page\` and a \`Location\` header. Optional header \`Idempotency-Key\`: the same key and payload within ${limits.idempotencyWindowHours} hours replays the first answer; another payload is 422. Unknown fields are ignored and listed in \`warnings\` (at most 20, then how many more). Bodies are UTF-8 (another charset is 415); a number JSON cannot hold (1e400) or an unpaired surrogate in any field is 422 naming the field.`,
    },
    fieldsTable(taskInputSchema(limits) as unknown as Json),
    { p: `Example: \`${JSON.stringify(deps.catalog[0]?.example_request ?? {})}\`` },
    { h: 2, text: 'The task as returned' },
    {
      p: `\`GET ${base}/api/${API_VERSION}/tasks/{task_id}\`. The contact e-mail is never returned. Statuses: \`submitted\` → \`accepted\` → \`delivered\`, or \`rejected\` from either; \`under_review\` and \`in_progress\` are retired and only appear in old histories.`,
    },
    fieldsTable(PublicTaskSchema as unknown as Json),
    ...structuredAnswerBlocks(base),
    { h: 2, text: 'Delivered files' },
    {
      p:
        `Once delivered, \`attachments\` lists the files the operator delivered (an empty array when none; absent before delivery). Download each from its \`url\` ` +
        `(\`GET ${base}/api/${API_VERSION}/tasks/{task_id}/attachments/{attachment_id}\`, public to whoever holds the task id): always \`Content-Disposition: attachment\`, ` +
        '`X-Content-Type-Options: nosniff`, `Content-Digest: sha-256=:<base64>:` (RFC 9530), a strong `ETag`, and single byte ranges (`Range: bytes=0-1023` → 206; past the end → 416). ' +
        'The media type is detected from the bytes (`application/octet-stream` when they prove nothing). Photo metadata (EXIF, XMP, GPS, maker notes) is stripped before the hash is taken unless the task has `location_required: true`.',
    },
    fieldsTable(PublicAttachmentSchema as unknown as Json),
    {
      p:
        'How to check a file: compute SHA-256 over the downloaded bytes (`sha256sum file`) and compare with its `sha256`; then verify the receipt (receipt_version 2), whose payload lists ' +
        '`attachments: [{name, media_type, size, sha256}]` in the same order. `deliverable_sha256` stays the hash of `operator_notes`. Version-1 receipts (issued before files existed) carry no list. ' +
        "With this service's code: `npm run verify-receipt -- <task_id> --files <directory with the downloaded files>`.",
    },
    { h: 2, text: 'Waiting for a result' },
    { list: waitingGuide(base) },
    { h: 2, text: 'Webhooks' },
    {
      p:
        'Instead of polling, give `callback_url` (https, at most 2000 characters, not a private or loopback address; never returned) with the task. ' +
        'When the task is accepted, delivered or rejected the service POSTs `{"type": "task.accepted" | "task.delivered" | "task.rejected", "timestamp", "data": <the task as GET returns it>}` to it, ' +
        'with the Standard Webhooks headers `webhook-id` (the same on every retry: deduplicate on it), `webhook-timestamp` (Unix seconds) and ' +
        `\`webhook-signature: v1a,<base64 Ed25519 signature over "<webhook-id>.<webhook-timestamp>.<raw body>">\`, made with a key published at [jwks.json](${base}/.well-known/jwks.json). ` +
        'Answer 2xx to acknowledge; 410 Gone stops this and later events of the task; anything else, a timeout of 10 s or a connection error is retried with backoff for about 3 days. Redirects are not followed. ' +
        'Two more events carry the task unchanged in status: `task.question` when the operator asks a question (`awaiting_answer` is true), and `task.deadline_passed`, once, when an accepted task passes its deadline undelivered.',
    },
    { h: 2, text: 'Questions from the operator' },
    {
      p:
        `${AWAITING_ANSWER_GUIDE} ` +
        'The task lists `questions: [{question_id, question, asked_at, answer, answered_at}]` (answer and answered_at null until answered; `[]` when none). ' +
        `\`POST ${base}/api/${API_VERSION}/tasks/{task_id}/questions/{question_id}/answer\` with \`{"answer": "..."}\` (${ANSWER_MIN}–${ANSWER_MAX} characters; no authentication beyond the task id, no quota) → 200 with the task. ` +
        'Each question takes one answer: a second is 409 `already_answered`; an unknown question 404 `question_not_found`. Asking and answering change `updated_at` and the ETag, so a held long-poll wakes. ' +
        `People answer on the task's status page (\`${base}/tasks?id={task_id}\`). A task still \`submitted\` when its deadline passes is rejected within a minute with \`operator_notes\` "The deadline passed before the task could be accepted."`,
    },
    { h: 2, text: 'Messages' },
    {
      p: `\`POST ${base}/api/${API_VERSION}/messages\` → 201 with \`message_id\`, \`created_at\` and a confirmation. The operator answers by e-mail to \`reply_to\` (from the service's sender address, threaded under the message with \`In-Reply-To\`) and also appear in the message's thread: the 201 carries \`thread_token\` (\`mt_…\`, shown once), and \`GET ${base}/api/${API_VERSION}/messages/{message_id}\` with \`Authorization: Bearer <thread_token>\` returns \`{message_id, created_at, subject, replies: [{reply_id, message, created_at}]}\` (a wrong or missing token: 404 \`not_found\`; MCP: \`check_message_thread\`). To withdraw a task, name its \`task_id\` in the message; the operator then rejects it with the reason "Withdrawn at the requester’s request." People can do the same without JSON through the form on the task's status page (\`${base}/tasks?id={task_id}#message\`), which shares these limits.`,
    },
    fieldsTable(messageInputSchema(limits) as unknown as Json),
    { h: 2, text: 'Services' },
    {
      p: `\`GET ${base}/api/${API_VERSION}/services?limit=&cursor=\` → \`{services, next_cursor}\`. \`limit\` 1–${limits.servicesPageMax}; pass \`next_cursor\` back as \`cursor\` until it is null. A cursor the service did not issue is 400 \`invalid_cursor\`.`,
    },
    { h: 2, text: 'Verified agents' },
    {
      p:
        'An agent may sign its requests as Web Bot Auth does (RFC 9421 HTTP Message Signatures; draft-meunier-web-bot-auth-architecture): `Signature-Agent` names its key directory ' +
        '(a JWKS at `/.well-known/http-message-signatures-directory` of its origin, or a full URL; a String, or a Dictionary member covered as `"signature-agent";key="…"`), ' +
        '`Signature-Input` with `tag="web-bot-auth"`, `created`, `expires` (at most 300 s apart; clocks may differ by 30 s), `keyid` (the RFC 7638 thumbprint of an Ed25519 key of the directory), ' +
        `an optional single-use \`nonce\`, covering \`@authority\` (this service's: \`${new URL(base).host}\`) and \`signature-agent\`; and \`Signature\`. Cloudflare's \`web-bot-auth\` package signs this way. ` +
        'A verified request is counted by its key, not its address: its own limits (see Limits, the verified tier) on every door (REST, /mcp, the forms), and `RateLimit-Policy` items say `comment="verified"` (else `comment="address"`). ' +
        `\`GET ${base}/api/${API_VERSION}/tasks?limit=&cursor=&status=\` (MCP \`list_my_tasks\`) lists a verified agent's own tasks, newest update first: \`{tasks, next_cursor}\`; unsigned, 400 \`signature_required\`. ` +
        'A signature that does not verify is 400 `invalid_signature` with `details: ["signature: <why>"]`, never 401. An unsigned client\'s 429 carries `Accept-Signature` inviting a signed retry.',
    },
    { h: 2, text: 'Errors' },
    {
      p: 'Every error is `{error, message}`; validation errors add `details`, an array of messages each naming its field. 5xx bodies never carry internals; quote the `X-Request-Id` header.',
    },
    errorCodesTable(),
    { h: 2, text: 'Headers' },
    {
      list: [
        '`RateLimit-Policy` on every response; `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` on reads and successful submissions (draft-ietf-httpapi-ratelimit-headers-06).',
        '`Retry-After` (seconds) on every 429 and 503 (503 `service_unavailable`: the store is not answering or too many connections are open; retry later).',
        '`ETag` and `Cache-Control: private, no-cache` on a status read: send `If-None-Match` to get 304 while the task is unchanged. Errors are `Cache-Control: no-store`.',
        '`Location` on 202 from task submission.',
        '`ETag` on task reads (send it back in `If-None-Match`); `Preference-Applied: wait=N` when a `Prefer: wait=N` was honoured. Both are exposed to browsers.',
        '`Deprecation` (RFC 9745), `Sunset` (RFC 8594) and `Link: rel="successor-version"` on the responses of a deprecated API version; version 1 sends none.',
      ],
    },
    { h: 2, text: 'Limits' },
    limitsTable(deps),
    { h: 2, text: 'Endpoints' },
    ...operationBlocks(openapi),
  ];
}
