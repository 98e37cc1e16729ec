import { beforeAll, describe, expect, it } from 'vitest';
import { submit, taskIn } from '../../../test/operator.support.js';
import { STORES, useTestApp, validTask } from '../../../test/support/app.js';
import { freePort } from '../../../test/support/net.js';
import {
  DuplicateTaskError,
  HumanTaskClient,
  HumanTaskError,
  MalformedRequestError,
  RateLimitedError,
  TaskNotFoundError,
  ValidationFailedError,
} from '../src/index.js';

/** Every refusal of the real app arrives as the typed error named by its contract code. */

type Input = Parameters<HumanTaskClient['submitTask']>[0];

describe.each(STORES)('human-task-client refusals (%s)', (store) => {
  const t = useTestApp({ store });
  let client: HumanTaskClient;
  beforeAll(() => {
    client = new HumanTaskClient({ baseUrl: t.url, issuer: t.config.baseUrl });
  });

  it('validation_failed: ValidationFailedError naming every field', async () => {
    const error = await client.submitTask({ task_type: 'nonsense', description: 'short' } as unknown as Input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationFailedError);
    const refused = error as ValidationFailedError;
    expect(refused).toMatchObject({ code: 'validation_failed', status: 422 });
    expect(refused.details.join(' ')).toMatch(/task_type/);
    expect(refused.details.join(' ')).toMatch(/description/);
  });

  it('duplicate_task: DuplicateTaskError with the existing task id', async () => {
    const input = validTask() as Input;
    const first = await client.submitTask(input);
    const error = await client.submitTask(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateTaskError);
    expect((error as DuplicateTaskError).existingTaskId).toBe(first.task_id);
  });

  it('task_not_found: TaskNotFoundError from getTask and waitForResult (no waiting on a task that does not exist)', async () => {
    const missing = 'task-2030-00000000000000000000000000000000';
    await expect(client.getTask(missing)).rejects.toBeInstanceOf(TaskNotFoundError);
    const started = Date.now();
    await expect(client.waitForResult(missing, { timeoutMs: 30_000 })).rejects.toMatchObject({ code: 'task_not_found', status: 404 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('every other code has its class too: a malformed query is MalformedRequestError', async () => {
    const pages = client.listServices({ pageSize: 0 });
    const error = await pages.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MalformedRequestError);
    expect(error).toMatchObject({ code: 'malformed_request', status: 400 });
  });

  it('a receipt that does not match: tampered, another task, another issuer', async () => {
    const id = await taskIn(t, 'delivered');
    const task = await client.getTask(id);
    const [h, p, s] = String(task.receipt).split('.');
    const payload = JSON.parse(Buffer.from(String(p), 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...payload, deliverable_sha256: 'a'.repeat(64) })).toString('base64url');
    expect(await client.verifyReceipt(`${h}.${forged}.${s}`)).toMatchObject({ valid: false, failure: 'signature' });
    const other = await taskIn(t, 'delivered');
    expect(await client.verifyReceipt(String(task.receipt), { taskId: other })).toMatchObject({ valid: false, failure: 'task_id' });
    expect(await client.verifyReceipt(task, { operatorNotes: 'Something else.' })).toMatchObject({ valid: false, failure: 'deliverable' });
    const elsewhere = new HumanTaskClient({ baseUrl: t.url });
    expect(await elsewhere.verifyReceipt(task)).toMatchObject({ valid: false, failure: 'issuer' });
  });

  it('a task without a receipt yet cannot be verified', async () => {
    const id = await submit(t);
    await expect(client.verifyReceipt(id)).rejects.toThrow(/is submitted: it has no receipt/);
  });

  it('an unreachable service is a network_error, after the retries', async () => {
    const closed = new HumanTaskClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, maxRetries: 1 });
    await expect(closed.getTask('task-2030-00000000000000000000000000000000')).rejects.toMatchObject({ code: 'network_error', status: 0 });
  });
});

describe('human-task-client over its limit', () => {
  const t = useTestApp({ limits: 'production', env: { TASK_LIMIT_PER_HOUR: '1' } });

  it('rate_limited: RateLimitedError with the limit and when to retry, not retried for an hour', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url });
    await client.submitTask(validTask() as Input);
    const started = Date.now();
    const error = await client.submitTask(validTask() as Input).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(RateLimitedError);
    const limited = error as RateLimitedError;
    expect(limited).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(limited.limit).toBeTypeOf('string');
    expect(limited.retryAfterSeconds).toBeGreaterThan(30);
    expect(limited).toBeInstanceOf(HumanTaskError);
  });
});
