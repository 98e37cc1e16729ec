import { describe, expect, it } from 'vitest';
import { AppError } from '../src/domain/errors.js';
import { createPushConfig, deletePushConfig, getPushConfig, listPushConfigs } from '../src/services/a2a/push-configs.js';
import { submit } from './operator.support.js';
import { STORES, startTestApp, type TestApp, useSuiteResource, useTestApp } from './support/app.js';
import { WEBHOOK_TEST_ENV } from './webhooks.support.js';

/**
 * Bad input to the push notification configs (services/a2a/push-configs.ts): each gets the
 * contract's error (validation_failed naming the field, task_not_found), never anything else.
 */

const UNKNOWN = `task-2030-${'0'.repeat(32)}`;

async function refusal(promise: Promise<unknown>): Promise<{ code: string; details: string[] }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  const body = (error as AppError).toBody() as { error: string; details?: string[] };
  return { code: body.error, details: body.details ?? [] };
}

describe.each(STORES)('A2A push notification configs, bad input, on %s', (store) => {
  const t = useTestApp({ store, env: WEBHOOK_TEST_ENV });
  const url = 'http://127.0.0.1:9/hook';

  it('refuses a sixth config of a task with validation_failed, while replacing one of the five still works', async () => {
    const taskId = await submit(t);
    for (let i = 0; i < 5; i++) await createPushConfig(t.deps, taskId, { id: `c${i}`, url });
    const sixth = await refusal(createPushConfig(t.deps, taskId, { url }));
    expect(sixth.code).toBe('validation_failed');
    expect(sixth.details).toEqual(['a task has at most 5 push notification configs; delete one first']);
    expect(await createPushConfig(t.deps, taskId, { id: 'c4', url: `${url}/again` })).toMatchObject({ id: 'c4', url: `${url}/again` });
    expect((await listPushConfigs(t.deps, taskId)).configs).toHaveLength(5);
    // Another task has its own five.
    const other = await submit(t);
    expect(await createPushConfig(t.deps, other, { url })).toMatchObject({ taskId: other });
    // Room again once one is deleted.
    await deletePushConfig(t.deps, taskId, 'c0');
    expect(await createPushConfig(t.deps, taskId, { id: 'c5', url })).toMatchObject({ id: 'c5' });
  });

  it('answers an unknown or malformed task id with task_not_found on all four operations', async () => {
    for (const taskId of [UNKNOWN, 'nonsense', 'x'.repeat(300)]) {
      expect((await refusal(createPushConfig(t.deps, taskId, { url }))).code).toBe('task_not_found');
      expect((await refusal(getPushConfig(t.deps, taskId, 'c'))).code).toBe('task_not_found');
      expect((await refusal(listPushConfigs(t.deps, taskId))).code).toBe('task_not_found');
      expect((await refusal(deletePushConfig(t.deps, taskId, 'c'))).code).toBe('task_not_found');
    }
  });

  it('answers an unknown config id with task_not_found (the specification’s TaskNotFoundError); deleting one is a no-op', async () => {
    const taskId = await submit(t);
    const missing = await refusal(getPushConfig(t.deps, taskId, 'nope'));
    expect(missing.code).toBe('task_not_found');
    await deletePushConfig(t.deps, taskId, 'nope');
    // A config of another task is not this task's.
    const other = await submit(t);
    const theirs = await createPushConfig(t.deps, other, { url });
    expect((await refusal(getPushConfig(t.deps, taskId, theirs.id))).code).toBe('task_not_found');
  });

  it.each([
    [null, /must be an object/],
    [['x'], /must be an object/],
    [{}, /^url is required/],
    [{ url: 5 }, /^url is required/],
    [{ url: 'not a url' }, /^url must be an absolute URL/],
    [{ url: `http://127.0.0.1/${'a'.repeat(2000)}` }, /^url must be at most 2000 characters/],
    [{ url, token: 'a\r\nX-Injected: 1' }, /^token must be printable ASCII/],
    [{ url, token: 7 }, /^token must be a string/],
    [{ url, id: 'x'.repeat(201) }, /^id must be at most 200 characters/],
    [{ url, authentication: 'Bearer x' }, /^authentication must be an object/],
    [{ url, authentication: { credentials: 'x' } }, /^authentication.scheme must be/],
    [{ url, authentication: { scheme: 'Bearer x' } }, /^authentication.scheme must be/],
    [{ url, authentication: { scheme: 'Bearer', credentials: 'x\ny' } }, /^authentication.credentials must be printable ASCII/],
    [{ url, taskId: UNKNOWN }, /^taskId must be the task/],
  ])('refuses the config %j with validation_failed naming the field', async (config, detail) => {
    const taskId = await submit(t);
    const refused = await refusal(createPushConfig(t.deps, taskId, config));
    expect(refused.code).toBe('validation_failed');
    expect(refused.details.some((d) => detail.test(d))).toBe(true);
    expect((await listPushConfigs(t.deps, taskId)).configs).toEqual([]);
  });
});

describe.runIf(STORES.includes('postgres'))('the fifth push notification config, raced on two instances of one PostgreSQL', () => {
  const a = useTestApp({ store: 'postgres', env: WEBHOOK_TEST_ENV });
  const b = useSuiteResource<TestApp>(
    () => startTestApp({ shareDatabaseWith: a, env: WEBHOOK_TEST_ENV }),
    (app) => app.close(),
  );

  it('goes to exactly one of two creations made at once', async () => {
    for (let round = 0; round < 5; round++) {
      const taskId = await submit(a);
      for (let i = 0; i < 4; i++) await createPushConfig(a.deps, taskId, { url: 'http://127.0.0.1:9/hook' });
      const outcomes = await Promise.allSettled([
        createPushConfig(a.deps, taskId, { url: 'http://127.0.0.1:9/a' }),
        createPushConfig(b.deps, taskId, { url: 'http://127.0.0.1:9/b' }),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect((refused.reason as AppError).code).toBe('validation_failed');
      expect((await listPushConfigs(a.deps, taskId)).configs).toHaveLength(5);
    }
  });
});
