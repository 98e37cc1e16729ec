// A stand-in operator for the A2A test kit (scripts/a2a-tck.sh, docs/a2a.md "Test kit").
// The kit scripts its agent by the messageId prefix of the requester's latest message (a2a-tck
// scenarios/*.feature: "tck-input-required…" asks for input, "tck-reject-task…" is rejected,
// "test-resubscribe-message-id…" runs for a while, anything else completes). Here a person plays
// that agent, so this process plays the person:
//   - a transparent HTTP proxy in front of the service (BASE_URL points at it, so the agent card
//     sends the kit here) notes the messageId, taskId and text of every SendMessage /
//     SendStreamingMessage on both bindings, and passes everything through untouched;
//   - a loop over the operator API (ADMIN_KEY only) matches each new task to the message that made
//     it (its description is the message's text) and each follow-up to its task, then accepts and
//     delivers, asks a question, or rejects, as the kit's scripted agent would.
// Development and test use only.
//
// Usage: node scripts/a2a-tck-operator.mjs LISTEN_PORT SERVICE_URL ADMIN_KEY   (runs until killed)
import http from 'node:http';

const [listenPort, service, adminKey] = process.argv.slice(2);
if (!listenPort || !service || !adminKey) {
  process.stderr.write('usage: node scripts/a2a-tck-operator.mjs LISTEN_PORT SERVICE_URL ADMIN_KEY\n');
  process.exit(2);
}
const TICK_MS = Number(process.env.TCK_OPERATOR_TICK_MS ?? 100);
const LONG_RUN_MS = Number(process.env.TCK_OPERATOR_LONG_RUN_MS ?? 6000);
const PENDING_MS = 10_000;
const admin = { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' };
const target = new URL(service);

const log = (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const norm = (text) => text.replace(/\s+/g, ' ').trim();

/** New-task messages not yet matched to a task: {messageId, text, at}. */
const pending = [];
/** Follow-ups per task id: [{messageId, at}], acted on once the service has taken them. */
const followUps = new Map();
/** Task id → the messageId that created it. */
const origin = new Map();
const seenMessageIds = new Set();
const longRuns = new Map();
const acted = new Set(); // `${task_id} ${messageId}` already acted on

// --- the proxy -------------------------------------------------------------------------------

function noteMessage(message) {
  if (!message || typeof message !== 'object' || typeof message.messageId !== 'string') return;
  const text = (message.parts ?? [])
    .filter((p) => typeof p?.text === 'string')
    .map((p) => p.text)
    .join('\n\n');
  const at = Date.now();
  if (typeof message.taskId === 'string' && message.taskId !== '') {
    const list = followUps.get(message.taskId) ?? [];
    list.push({ messageId: message.messageId, at });
    followUps.set(message.taskId, list);
    log(`follow-up ${message.messageId} on ${message.taskId}`);
    return;
  }
  if (seenMessageIds.has(message.messageId)) return; // a replay names the task it made already
  seenMessageIds.add(message.messageId);
  pending.push({ messageId: message.messageId, text: norm(text), at });
}

/**
 * The kit names messages with one id per scenario and session (tck_id("complete-task") in its
 * tck/requirements/base.py), so it sends one messageId with many different messages, while
 * a2a.proto's Message.message_id is unique per message and the contract makes it the idempotency
 * key (another payload: 422, the same payload: the same task). Unless A2A_TCK_KEEP_MESSAGE_IDS is
 * set, a messageId already sent is made unique again ("<id>.<n>") before the service sees it.
 */
const UNIQUE_IDS = !process.env.A2A_TCK_KEEP_MESSAGE_IDS;
const sent = new Map(); // messageId → times sent

function uniquify(message) {
  if (!UNIQUE_IDS || !message || typeof message.messageId !== 'string') return false;
  const n = sent.get(message.messageId) ?? 0;
  sent.set(message.messageId, n + 1);
  if (n === 0) return false;
  message.messageId = `${message.messageId}.${n}`;
  return true;
}

/** Notes the message a send carries; returns the body to forward (its messageId made unique). */
function inspect(req, body) {
  if (req.method !== 'POST' || body.length === 0) return body;
  let json;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  let message;
  if (json?.method === 'SendMessage' || json?.method === 'SendStreamingMessage') message = json.params?.message;
  else if (/\/message:(send|stream)$/.test(new URL(req.url, 'http://x').pathname)) message = json?.message;
  else return body;
  const changed = uniquify(message);
  noteMessage(message);
  return changed ? Buffer.from(JSON.stringify(json)) : body;
}

const proxy = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = inspect(req, Buffer.concat(chunks));
    const headers = { ...req.headers };
    if (headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.rawHeaders);
      up.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`a2a-tck proxy: ${error.message}`);
    });
    res.on('close', () => upstream.destroy());
    upstream.end(body);
  });
});
proxy.listen(Number(listenPort), '127.0.0.1', () => log(`proxy on ${listenPort} → ${service}`));

// --- the operator ----------------------------------------------------------------------------

async function call(method, path, body) {
  const res = await fetch(new URL(path, service), { method, headers: admin, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (res.status >= 300) log(`${method} ${path} ${body ? JSON.stringify(body) : ''} → ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, json };
}

function plan(messageId) {
  if (messageId.startsWith('tck-input-required')) return 'ask';
  if (messageId.startsWith('tck-reject-task')) return 'reject';
  if (messageId.startsWith('test-resubscribe-message-id')) return 'long';
  return 'deliver';
}

const eta = () => new Date(Date.now() + 3_600_000).toISOString();

async function act(task, messageId) {
  const key = `${task.task_id} ${messageId}`;
  if (acted.has(key)) return;
  acted.add(key);
  const what = plan(messageId);
  log(`${task.task_id} (${task.status}) ${messageId} → ${what}`);
  if (what === 'ask') {
    // Asked while still submitted, so a CancelTask withdraws it at once (contract: A2A CancelTask).
    await call('POST', `/api/v1/admin/tasks/${task.task_id}/questions`, {
      question: 'The TCK stand-in operator asks for input: please reply to go on.',
    });
    return;
  }
  if (what === 'reject') {
    await call('PATCH', `/api/v1/admin/tasks/${task.task_id}`, { status: 'rejected', operator_notes: 'rejected' });
    return;
  }
  if (task.status === 'submitted') {
    const accepted = await call('PATCH', `/api/v1/admin/tasks/${task.task_id}`, { status: 'accepted', eta: eta() });
    if (accepted.status >= 300) return;
  }
  if (what === 'long') {
    longRuns.set(task.task_id, Date.now() + LONG_RUN_MS);
    return;
  }
  if (messageId.startsWith('tck-artifact-file')) await attach(task.task_id, 'output.txt', 'Generated file content');
  await call('PATCH', `/api/v1/admin/tasks/${task.task_id}`, { status: 'delivered', operator_notes: deliverable(messageId) });
}

/** The scenario's deliverable text (a2a-tck scenarios/core_operations.feature), else the default. */
function deliverable(messageId) {
  if (messageId.startsWith('tck-artifact-text')) return 'Generated text content';
  if (messageId.startsWith('tck-message-response')) return 'Direct message response';
  return 'Hello from TCK';
}

/** The file the file-artifact scenarios expect; the deliverable lists it after its text part. */
async function attach(taskId, name, text) {
  const res = await fetch(new URL(`/api/v1/admin/tasks/${taskId}/attachments`, service), {
    method: 'POST',
    headers: { Authorization: admin.Authorization, 'Content-Type': 'text/plain', 'Content-Disposition': `attachment; filename="${name}"` },
    body: text,
  });
  if (res.status >= 300) log(`attach ${taskId} → ${res.status} ${(await res.text()).slice(0, 300)}`);
}

function matchNew(task) {
  const now = Date.now();
  while (pending.length > 0 && now - pending[0].at > PENDING_MS) pending.shift();
  const description = norm(task.description ?? '');
  let i = pending.findIndex((p) => p.text === description);
  if (i < 0) i = pending.length > 0 ? 0 : -1;
  if (i < 0) return undefined;
  const [entry] = pending.splice(i, 1);
  return entry.messageId;
}

async function tick() {
  const now = Date.now();
  for (const [taskId, at] of longRuns) {
    if (at > now) continue;
    longRuns.delete(taskId);
    await call('PATCH', `/api/v1/admin/tasks/${taskId}`, { status: 'delivered', operator_notes: 'Hello from TCK (long-running)' });
  }
  const queue = await call('GET', '/api/v1/admin/tasks?status=open&order=oldest&limit=200');
  for (const task of queue.json?.tasks ?? []) {
    if (longRuns.has(task.task_id)) continue;
    if (!origin.has(task.task_id)) {
      const messageId = matchNew(task);
      origin.set(task.task_id, messageId ?? '');
      if (messageId === undefined) log(`${task.task_id}: no message seen for it; delivering`);
      await act(task, messageId ?? `unmatched-${task.task_id}`);
      continue;
    }
    // A follow-up: once it has answered the open question (or, with none open, after a moment to
    // let the service record it), act on its prefix.
    const list = followUps.get(task.task_id) ?? [];
    if (list.length === 0 || task.awaiting_answer) continue;
    const latest = list[list.length - 1];
    if (now - latest.at < 300) continue;
    followUps.set(task.task_id, []);
    await act(task, latest.messageId);
  }
}

for (;;) {
  try {
    await tick();
  } catch (error) {
    log(`tick failed: ${error}`);
  }
  await sleep(TICK_MS);
}
