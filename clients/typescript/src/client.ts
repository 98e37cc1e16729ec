import type { OperatorKeySet } from './approvals.js';
import { fromBase64Url } from './encoding.js';
import { errorFromResponse, HumanTaskError, TaskNotFoundError, WaitTimeoutError } from './errors.js';
import { anySignal, quotaResetSeconds, retryAfterSeconds, sleep } from './http.js';
import { checkpointSize, type LogVerdict, receiptSubject, verifyReceiptLog } from './log.js';
import type {
  MessageInput,
  MessageResponse,
  MessageThread,
  PublicTask,
  ServiceEntry,
  ServicesPage,
  StructuredResult,
  Submission,
  SubmissionResponse,
  TaskInput,
  TaskRef,
  TypedTask,
} from './types.js';
import {
  type HeaderSource,
  type JSONWebKeySet,
  type ReceiptVerdict,
  type ReceivedFile,
  type VerifyWebhookOptions,
  verifyReceipt,
  verifyWebhook,
  type WebhookVerdict,
} from './verify.js';
import { type AgentKey, authorityOf, webBotAuthSigner } from './web-bot-auth.js';

/**
 * The typed client. Runs on `fetch` alone (Node 20+, Deno, Bun, browsers, edge runtimes), and makes
 * the polite path the easy one: idempotent submissions, conditional reads, long-polling with
 * backoff that honours Retry-After and RateLimit-Reset, and receipt verification.
 */

export interface HumanTaskClientOptions {
  /** The service's base URL (default http://localhost:8080). */
  baseUrl?: string;
  /** The issuer receipts must name (default: baseUrl; differs only when the service's BASE_URL does). */
  issuer?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
  /** Retries of a refused (429/503) or failed request the client makes on its own (default 3). */
  maxRetries?: number;
  /** The longest Retry-After the client waits out on its own before giving the refusal to the caller (default 30 s). */
  maxRetryDelayMs?: number;
  /** A JWKS to verify against offline; without it the service's /.well-known/jwks.json is fetched and cached. */
  jwks?: JSONWebKeySet;
  /** How long a fetched JWKS is used before fetching it again (default 10 minutes). */
  jwksTtlMs?: number;
  /**
   * The operator keys to check a version-3 receipt's passkey approvals against offline; without
   * them the service's /.well-known/operator-keys.json is fetched when a receipt lists approvals,
   * unless `jwks` was given (offline: then attested approvals fail for want of keys).
   */
  operatorKeys?: OperatorKeySet;
  /**
   * Sign every request as this agent (Web Bot Auth, docs/verified-agents.md): the service then
   * counts the key, not the address, under its verified limits. The `@authority` signed is the
   * issuer's (the service's BASE_URL).
   */
  agent?: AgentKey;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface SubmitOptions extends RequestOptions {
  /** The key of this logical submission; generated when absent. Pass the same key to retry it later. */
  idempotencyKey?: string;
}

export interface WaitProgress {
  task: PublicTask;
  status: PublicTask['status'];
  eta: string | null;
  elapsedMs: number;
}

export interface WaitOptions extends RequestOptions {
  /** Give up after this long (ms). */
  timeoutMs?: number;
  /** Give up at this moment. The earlier of timeoutMs and deadline applies. */
  deadline?: Date;
  /** Seconds each long-poll may be held (1–60; default 50). */
  waitSeconds?: number;
  /** First delay between polls when the service does not hold requests (default 2 s, growing to 60 s). */
  pollIntervalMs?: number;
  /** Called after every answer, changed or not. */
  onProgress?: (progress: WaitProgress) => void;
}

export interface VerifyReceiptLogTaskOptions extends RequestOptions {
  /** The tlog-proof, held as a file (default: fetched from /api/v1/tasks/{task_id}/receipt-proof). */
  proof?: string;
  /** The log's verifier key, pinned (default: fetched from /log/vkey). */
  vkey?: string;
  /** A checkpoint kept earlier: the log must have only grown since. */
  olderCheckpoint?: string;
  /** The consistency proof from olderCheckpoint (default: fetched from /log/consistency?from=<its size>). */
  consistency?: string;
  /** Trusted TSA certificate(s), PEM: a time-stamp token's chain must lead to one (default: its signature only). */
  tsaCa?: string;
}

export interface VerifyTaskReceiptOptions extends RequestOptions {
  /** Files received with the deliverable, checked against a version-2 receipt's attachments. */
  files?: ReceivedFile[];
  /** The deliverable to check (default: the task's operator_notes when a task or task id is given). */
  operatorNotes?: string;
  /** The task the receipt must be for (default: the task given). */
  taskId?: string;
  /** The operator keys for a version-3 receipt's approvals (default: the constructor's, else fetched). */
  operatorKeys?: OperatorKeySet;
}

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  /** The body as text (the log's proofs and keys are text/plain). */
  text: string;
}

const FINAL: readonly string[] = ['delivered', 'rejected'];
const MAX_POLL_MS = 60_000;
const MAX_CACHED_TASKS = 1_000;

export class HumanTaskClient {
  readonly baseUrl: string;
  readonly issuer: string;
  private readonly fetchImpl: typeof fetch;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly jwksTtlMs: number;
  private readonly fixedJwks: JSONWebKeySet | undefined;
  private readonly fixedOperatorKeys: OperatorKeySet | undefined;
  private jwksCache: { jwks: JSONWebKeySet; at: number } | undefined;
  private readonly signer: ((authority: string) => Promise<Record<string, string>>) | undefined;
  /** Last seen ETag and task by id: getTask answers 304s from here. */
  private readonly tasks = new Map<string, { etag: string; task: PublicTask }>();

  constructor(options: HumanTaskClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? 'http://localhost:8080').replace(/\/+$/, '');
    this.issuer = (options.issuer ?? this.baseUrl).replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.maxRetries = options.maxRetries ?? 3;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.jwksTtlMs = options.jwksTtlMs ?? 600_000;
    this.fixedJwks = options.jwks;
    this.fixedOperatorKeys = options.operatorKeys;
    this.signer = options.agent === undefined ? undefined : webBotAuthSigner(options.agent);
  }

  /**
   * Submits a task (202). One Idempotency-Key per logical submission, reused on every retry, so a
   * retry after a lost answer replays the original instead of creating a second task.
   */
  async submitTask<T = StructuredResult>(input: TaskInput & Record<string, unknown>, options: SubmitOptions = {}): Promise<Submission<T>> {
    const key = options.idempotencyKey ?? crypto.randomUUID();
    const answer = await this.request('POST', '/api/v1/tasks', { body: input, headers: { 'idempotency-key': key }, signal: options.signal, idempotent: true });
    return { ...(answer.body as SubmissionResponse), idempotency_key: key, replayed: answer.headers.get('idempotent-replayed') === 'true' };
  }

  /** The task's public state. Conditional: a 304 answers from the last copy seen. */
  async getTask<T = StructuredResult>(task: TaskRef<T>, options: RequestOptions = {}): Promise<TypedTask<T>> {
    return (await this.readTask(taskIdOf(task), { signal: options.signal })).task as TypedTask<T>;
  }

  /** Sends the operator a message (201). A withdrawal names the task id in the text. */
  async sendMessage(input: MessageInput & Record<string, unknown>, options: RequestOptions = {}): Promise<MessageResponse> {
    const answer = await this.request('POST', '/api/v1/messages', { body: input, signal: options.signal, idempotent: false });
    return answer.body as MessageResponse;
  }

  /**
   * Answers the operator's question (200 with the task). When a task has `awaiting_answer`, the
   * open question is the one in `questions` whose `answer` is null. Each question takes one answer.
   */
  async answerQuestion(taskId: string, questionId: string, answer: string, options: RequestOptions = {}): Promise<PublicTask> {
    const path = `/api/v1/tasks/${encodeURIComponent(taskId)}/questions/${encodeURIComponent(questionId)}/answer`;
    // Not retried blindly: a lost answer that did arrive would come back as already_answered.
    return (await this.request('POST', path, { body: { answer }, signal: options.signal, idempotent: false })).body as PublicTask;
  }

  /**
   * Withdraws a task (POST /api/v1/tasks/{task_id}/cancel), with the message quota: a task nobody
   * accepted yet is withdrawn at once (status "rejected", the reason as message); for an accepted
   * one the operator gets a withdrawal request and the status does not change: the operator
   * decides. A final task is 409 invalid_transition.
   */
  async cancelTask(taskId: string, options: RequestOptions = {}): Promise<{ task_id: string; status: string; message: string }> {
    const path = `/api/v1/tasks/${encodeURIComponent(taskId)}/cancel`;
    // Safe to repeat: a second request answers the first one again.
    return (await this.request('POST', path, { signal: options.signal, idempotent: true })).body as { task_id: string; status: string; message: string };
  }

  /** The operator's replies to a message, read with the thread_token sendMessage returned. */
  async readThread(messageId: string, threadToken: string, options: RequestOptions = {}): Promise<MessageThread> {
    const headers = { authorization: `Bearer ${threadToken}` };
    return (await this.request('GET', `/api/v1/messages/${encodeURIComponent(messageId)}`, { headers, signal: options.signal, idempotent: true }))
      .body as MessageThread;
  }

  /** Every catalog entry, following next_cursor page by page. */
  async *listServices(options: RequestOptions & { pageSize?: number } = {}): AsyncGenerator<ServiceEntry, void, undefined> {
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams();
      if (options.pageSize !== undefined) query.set('limit', String(options.pageSize));
      if (cursor !== null) query.set('cursor', cursor);
      const suffix = query.toString() === '' ? '' : `?${query.toString()}`;
      const page = (await this.request('GET', `/api/v1/services${suffix}`, { signal: options.signal, idempotent: true })).body as ServicesPage;
      yield* page.services;
      cursor = page.next_cursor;
    } while (cursor !== null);
  }

  /**
   * Waits until the task is delivered or rejected, or the operator asks a question
   * (`awaiting_answer`: answer it with answerQuestion, then wait again), and returns it. Long-polls (`Prefer: wait` with
   * `If-None-Match`); against a service that does not hold requests it polls with a growing delay,
   * and always waits out Retry-After and an exhausted read quota (RateLimit-Reset). Throws
   * WaitTimeoutError at the deadline and the signal's reason when aborted.
   */
  async waitForResult<T = StructuredResult>(task: TaskRef<T>, options: WaitOptions = {}): Promise<TypedTask<T>> {
    // `result` is whatever the service delivered against the task's response_schema: typed as asked.
    return (await this.waitFor(taskIdOf(task), options)) as TypedTask<T>;
  }

  private async waitFor(taskId: string, options: WaitOptions): Promise<PublicTask> {
    const started = Date.now();
    const deadlines = [options.deadline?.getTime(), options.timeoutMs === undefined ? undefined : started + options.timeoutMs].filter(
      (d): d is number => d !== undefined,
    );
    const deadline = deadlines.length > 0 ? Math.min(...deadlines) : Number.POSITIVE_INFINITY;
    const waitSeconds = Math.min(60, Math.max(1, Math.floor(options.waitSeconds ?? 50)));
    const firstDelay = options.pollIntervalMs ?? 2_000;
    let delay = firstDelay;
    let last: PublicTask | undefined = this.tasks.get(taskId)?.task;
    if (last) {
      // Known already: report it at once (a long-poll's first answer only comes with a change).
      options.onProgress?.({ task: last, status: last.status, eta: last.eta, elapsedMs: 0 });
      if (FINAL.includes(last.status) || last.awaiting_answer) return last;
    }
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new WaitTimeoutError(`Task ${taskId} is still ${last?.status ?? 'unknown'} after ${Math.round((Date.now() - started) / 1000)} s.`, last);
      const hold = Math.min(waitSeconds, Math.floor(remaining / 1000));
      let pause: number;
      try {
        // A held request may take `hold` seconds; past that (plus a margin) the connection is dead.
        const timeoutMs = Math.ceil(Math.min(remaining, hold * 1000 + 30_000));
        const read = await this.readTask(taskId, { signal: options.signal, waitSeconds: hold >= 1 ? hold : undefined, retry: false, timeoutMs });
        last = read.task;
        options.onProgress?.({ task: read.task, status: read.task.status, eta: read.task.eta, elapsedMs: Date.now() - started });
        if (FINAL.includes(read.task.status) || read.task.awaiting_answer) return read.task;
        if (read.held) {
          // The service held the request: ask again at once (a second's pause guards against a
          // service that answers held requests immediately).
          pause = read.tookMs < 1_000 ? 1_000 : 0;
          delay = firstDelay;
        } else if (!read.askedToHold && read.etag !== null && hold >= 1) {
          // First answer with an ETag: the next request can be a long-poll; try it at once.
          pause = 0;
        } else {
          pause = delay;
          delay = Math.min(MAX_POLL_MS, Math.round(delay * 1.5));
        }
        const reset = quotaResetSeconds(read.headers);
        if (reset !== undefined) pause = Math.max(pause, reset * 1000);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (error instanceof TaskNotFoundError || !(error instanceof HumanTaskError)) throw error;
        if (error.retryAfterSeconds !== undefined) {
          // Refused (429/503): wait what the service asked, unless that outlasts the deadline.
          if (Date.now() + error.retryAfterSeconds * 1000 > deadline) throw error;
          pause = error.retryAfterSeconds * 1000;
        } else if (error.code === 'network_error' || error.status >= 500) {
          pause = delay;
          delay = Math.min(MAX_POLL_MS, Math.round(delay * 1.5));
        } else {
          throw error;
        }
      }
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())), options.signal);
    }
  }

  /**
   * Verifies a receipt: given as a compact JWS, a task as getTask returns it, or a task id (then
   * fetched). Checks the signature against the service's JWKS (fetched and cached, or the one given
   * to the constructor), `iss`, `sub`, the deliverable hash and, with files, the attachments.
   */
  async verifyReceipt(subject: string | TypedTask<unknown>, options: VerifyTaskReceiptOptions = {}): Promise<ReceiptVerdict> {
    let receipt: string | undefined;
    let task: TypedTask<unknown> | undefined;
    if (typeof subject === 'string' && subject.includes('.')) receipt = subject;
    else task = typeof subject === 'string' ? await this.getTask(subject, { signal: options.signal }) : subject;
    if (task) {
      receipt = task.receipt;
      if (receipt === undefined)
        throw new HumanTaskError('unexpected_response', `Task ${task.task_id} is ${task.status}: it has no receipt (receipts are issued on delivery).`);
    }
    const operatorNotes = options.operatorNotes ?? task?.operator_notes ?? undefined;
    const taskId = options.taskId ?? task?.task_id;
    let operatorKeys = options.operatorKeys ?? this.fixedOperatorKeys;
    if (operatorKeys === undefined && this.fixedJwks === undefined && listsApprovals(receipt ?? '')) operatorKeys = await this.operatorKeys(options.signal);
    const verify = async (jwks: JSONWebKeySet) =>
      verifyReceipt(receipt ?? '', {
        jwks,
        issuer: this.issuer,
        ...(operatorKeys === undefined ? {} : { operatorKeys }),
        ...(taskId === undefined ? {} : { taskId }),
        ...(operatorNotes === undefined ? {} : { operatorNotes }),
        ...(options.files === undefined ? {} : { files: options.files }),
      });
    const verdict = await verify(await this.jwks(options.signal));
    // A key published since the cache was filled (a rotation): fetch the JWKS once more.
    if (verdict.failure === 'kid' && !this.fixedJwks) return verify(await this.jwks(options.signal, true));
    return verdict;
  }

  /**
   * Verifies a webhook request (Standard Webhooks `v1a`, and its Web Bot Auth signature when it
   * carries one: Signature-Agent naming the issuer's origin) against the service's JWKS. Pass the raw body.
   */
  async verifyWebhook(
    request: { headers: HeaderSource; body: string | Uint8Array },
    options: RequestOptions & Pick<VerifyWebhookOptions, 'now' | 'toleranceSeconds' | 'authority' | 'requireWebBotAuth'> = {},
  ): Promise<WebhookVerdict> {
    const { signal: _signal, ...given } = options;
    const opts = { signerOrigin: this.issuer, ...given };
    const verdict = await verifyWebhook(request, { jwks: await this.jwks(options.signal), ...opts });
    if (verdict.failure === 'signature' && !this.fixedJwks) return verifyWebhook(request, { jwks: await this.jwks(options.signal, true), ...opts });
    return verdict;
  }

  /**
   * Verifies that a task's receipt is in the service's public log (docs/receipt-log.md): the
   * tlog-proof, the checkpoint's signature by the log's verifier key, the inclusion path, the
   * RFC 3161 token when present (with `tsaCa`, its chain too) and, with `olderCheckpoint`, consistency. Anything not
   * given is fetched; with a receipt string, `proof` and `vkey` nothing is.
   */
  async verifyReceiptLog(subject: string | TypedTask<unknown>, options: VerifyReceiptLogTaskOptions = {}): Promise<LogVerdict> {
    const { signal } = options;
    let receipt: string;
    let taskId: string | undefined;
    if (typeof subject === 'string' && subject.includes('.')) {
      receipt = subject;
      taskId = receiptSubject(subject);
    } else {
      const task = typeof subject === 'string' ? await this.getTask(subject, { signal }) : subject;
      if (task.receipt === undefined)
        throw new HumanTaskError('unexpected_response', `Task ${task.task_id} is ${task.status}: it has no receipt (receipts are issued on delivery).`);
      receipt = task.receipt;
      taskId = task.task_id;
    }
    const text = async (path: string) => (await this.request('GET', path, { signal, idempotent: true })).text;
    let proof = options.proof;
    if (proof === undefined) {
      if (taskId === undefined) throw new HumanTaskError('unexpected_response', 'The receipt names no task: pass the proof.');
      proof = await text(`/api/v1/tasks/${encodeURIComponent(taskId)}/receipt-proof`);
    }
    const vkey = options.vkey ?? (await text('/log/vkey'));
    let consistency = options.consistency;
    let rolledBack = false;
    if (options.olderCheckpoint !== undefined && consistency === undefined) {
      const size = checkpointSize(options.olderCheckpoint);
      try {
        if (size !== null) consistency = await text(`/log/consistency?from=${size}`);
      } catch (error) {
        if (!(error instanceof HumanTaskError) || error.status !== 404) throw error;
        rolledBack = true;
      }
    }
    const verdict = await verifyReceiptLog(receipt, {
      proof,
      vkey,
      ...(options.olderCheckpoint === undefined ? {} : { olderCheckpoint: options.olderCheckpoint }),
      ...(consistency === undefined ? {} : { consistency }),
      ...(options.tsaCa === undefined ? {} : { tsaCa: options.tsaCa }),
    });
    if (rolledBack) {
      const check = verdict.checks.find((c) => c.name === 'log_consistency');
      if (check?.ok === false && check.detail.startsWith('no consistency proof'))
        check.detail = 'the log is now smaller than the older checkpoint: it was rolled back or forked';
    }
    return verdict;
  }

  /** The service's /.well-known/operator-keys.json: the passkeys approvals are signed with, by key_id, with since/until. */
  async operatorKeys(signal?: AbortSignal): Promise<OperatorKeySet> {
    const answer = await this.request('GET', '/.well-known/operator-keys.json', { signal, idempotent: true });
    const keys = answer.body as OperatorKeySet;
    if (!Array.isArray(keys?.keys))
      throw new HumanTaskError('unexpected_response', 'The service published no key set at /.well-known/operator-keys.json.', { status: answer.status });
    return keys;
  }

  /** The service's published keys, cached for jwksTtlMs. */
  async jwks(signal?: AbortSignal, refresh = false): Promise<JSONWebKeySet> {
    if (this.fixedJwks) return this.fixedJwks;
    if (!refresh && this.jwksCache && Date.now() - this.jwksCache.at < this.jwksTtlMs) return this.jwksCache.jwks;
    const answer = await this.request('GET', '/.well-known/jwks.json', { signal, idempotent: true });
    const jwks = answer.body as JSONWebKeySet;
    if (!Array.isArray(jwks?.keys))
      throw new HumanTaskError('unexpected_response', 'The service published no key set at /.well-known/jwks.json.', { status: answer.status });
    this.jwksCache = { jwks, at: Date.now() };
    return jwks;
  }

  private async readTask(
    taskId: string,
    options: { signal: AbortSignal | undefined; waitSeconds?: number | undefined; retry?: boolean; timeoutMs?: number },
  ): Promise<{ task: PublicTask; headers: Headers; etag: string | null; askedToHold: boolean; held: boolean; tookMs: number }> {
    const cached = this.tasks.get(taskId);
    const headers: Record<string, string> = {};
    if (cached) headers['if-none-match'] = cached.etag;
    // Prefer: wait only makes sense with a version to compare against (contract: "together with If-None-Match").
    if (cached && options.waitSeconds !== undefined) headers.prefer = `wait=${options.waitSeconds}`;
    const started = Date.now();
    const answer = await this.request('GET', `/api/v1/tasks/${encodeURIComponent(taskId)}`, {
      headers,
      signal: options.signal,
      idempotent: true,
      retry: options.retry ?? true,
      timeoutMs: options.timeoutMs,
    });
    const askedToHold = headers.prefer !== undefined;
    const held = askedToHold && (answer.headers.get('preference-applied')?.startsWith('wait') ?? false);
    const tookMs = Date.now() - started;
    const etag = answer.headers.get('etag');
    if (answer.status === 304 && cached) return { task: cached.task, headers: answer.headers, etag: etag ?? cached.etag, askedToHold, held, tookMs };
    const task = answer.body as PublicTask;
    if (etag) {
      // Bounded: a long-lived client that reads many tasks keeps the most recent ones.
      this.tasks.delete(taskId);
      this.tasks.set(taskId, { etag, task });
      if (this.tasks.size > MAX_CACHED_TASKS) this.tasks.delete(this.tasks.keys().next().value as string);
    }
    return { task, headers: answer.headers, etag, askedToHold, held, tookMs };
  }

  /** One API call; retries refusals that say when (429/503 within maxRetryDelayMs) and, when idempotent, failures. */
  private async request(
    method: 'GET' | 'POST',
    path: string,
    options: {
      body?: unknown;
      headers?: Record<string, string>;
      signal: AbortSignal | undefined;
      idempotent: boolean;
      retry?: boolean;
      timeoutMs?: number | undefined;
    },
  ): Promise<Answer> {
    const retries = options.retry === false ? 0 : this.maxRetries;
    for (let attempt = 0; ; attempt += 1) {
      const backoff = Math.min(this.maxRetryDelayMs, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
      let response: Response;
      try {
        const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
        if (options.body !== undefined) headers['content-type'] = 'application/json';
        // Signed anew on every attempt: each signature's nonce is single-use.
        if (this.signer) Object.assign(headers, await this.signer(authorityOf(this.issuer)));
        const signal = anySignal([options.signal, options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs)]);
        response = await this.fetchImpl(`${this.baseUrl}${path}`, {
          method,
          headers,
          ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
          ...(signal === undefined ? {} : { signal }),
        });
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (options.idempotent && attempt < retries) {
          await sleep(backoff, options.signal);
          continue;
        }
        throw new HumanTaskError('network_error', `Could not reach ${this.baseUrl}: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      }
      const text = await response.text();
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (response.ok || response.status === 304) return { status: response.status, headers: response.headers, body, text };
      const retryAfter = retryAfterSeconds(response.headers);
      const error = errorFromResponse(response.status, body, retryAfter);
      const refused = response.status === 429 || response.status === 503;
      if (attempt < retries && refused && error.retryAfterSeconds !== undefined && error.retryAfterSeconds * 1000 <= this.maxRetryDelayMs) {
        await sleep(error.retryAfterSeconds * 1000, options.signal);
        continue;
      }
      if (attempt < retries && options.idempotent && (response.status === 502 || response.status === 504)) {
        await sleep(backoff, options.signal);
        continue;
      }
      throw error;
    }
  }
}

function taskIdOf(task: TaskRef<unknown>): string {
  return typeof task === 'string' ? task : task.task_id;
}

/** Whether a compact JWS's payload (read before verifying) is a version-3 receipt, whose approvals need the operator keys. */
function listsApprovals(receipt: string): boolean {
  const bytes = fromBase64Url(receipt.split('.')[1] ?? '');
  try {
    return bytes !== null && (JSON.parse(new TextDecoder().decode(bytes)) as { receipt_version?: unknown }).receipt_version === 3;
  } catch {
    return false;
  }
}
