import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../../../src/domain/answers/answer-example.js';
import { patchOk } from '../../../test/operator.support.js';
import { STORES, useTestApp, validTask } from '../../../test/support/app.js';
import { HumanTaskClient, type TypedTask } from '../src/index.js';
import { htask, startHtask } from './cli.support.js';

/** Structured answers through the TypeScript client and htask: the result typed as asked. */

interface ShopAnswer {
  open_on_sundays: boolean;
  checked_on: string;
  how_checked: 'in_person' | 'phone' | 'sign_on_door' | 'website';
  hours: { day: string; opens: string; closes: string }[];
  note?: string;
}

describe.each(STORES)('structured answers through the clients (%s)', (store) => {
  const t = useTestApp({ store });
  let client: HumanTaskClient;
  beforeAll(() => {
    client = new HumanTaskClient({ baseUrl: t.url, issuer: t.config.baseUrl });
  });

  it('submitTask<T>() types result as T | null, through waitForResult and getTask, and the receipt verifies', async () => {
    const submission = await client.submitTask<ShopAnswer>(
      validTask({ response_schema: EXAMPLE_RESPONSE_SCHEMA }) as Parameters<HumanTaskClient['submitTask']>[0],
    );
    const before = await client.getTask(submission);
    expect(before.result).toBeNull();
    expect(before.response_schema).toEqual(EXAMPLE_RESPONSE_SCHEMA);
    await patchOk(t, submission.task_id, { status: 'accepted' });
    await patchOk(t, submission.task_id, { status: 'delivered', result: EXAMPLE_RESULT });
    const done: TypedTask<ShopAnswer> = await client.waitForResult(submission, { timeoutMs: 30_000 });
    // Typed: these compile only because result is ShopAnswer | null.
    const hours: string[] = done.result?.hours.map((h) => `${h.day} ${h.opens}-${h.closes}`) ?? [];
    expect(done.result?.open_on_sundays).toBe(true);
    expect(hours).toEqual(['saturday 07:30-19:30', 'sunday 08:00-13:00']);
    expect((await client.verifyReceipt(done)).valid).toBe(true);
  });

  it('htask submit --schema FILE asks for a structured answer, and htask wait prints the result', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'htask-schema-'));
    const schemaFile = path.join(dir, 'schema.json');
    writeFileSync(schemaFile, JSON.stringify(EXAMPLE_RESPONSE_SCHEMA));
    const submitted = await htask(
      [
        '--json',
        'submit',
        '--task-type',
        'real_world_verification',
        '--description',
        String(validTask().description),
        '--delivery',
        'status_poll',
        '--schema',
        schemaFile,
      ],
      { baseUrl: t.url },
    );
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = (JSON.parse(submitted.stdout) as { task_id: string }).task_id;
    const waiting = startHtask(['wait', id, '--timeout', '60'], { baseUrl: t.url });
    await waiting.stderrContains(`${id}: submitted`);
    await patchOk(t, id, { status: 'accepted' });
    await patchOk(t, id, { status: 'delivered', result: EXAMPLE_RESULT });
    const waited = await waiting.done;
    expect(waited.code).toBe(0);
    // The result's keys in canonical (RFC 8785) order: it is read back from the canonical deliverable.
    expect(waited.stdout).toContain(
      '  result:\n    checked_on: 2030-03-10\n    hours:\n      - 1:\n        closes: 19:30\n        day: saturday\n        opens: 07:30\n      - 2:\n',
    );
    expect(waited.stdout).toContain('    open_on_sundays: true\n');
    const json = await htask(['--json', 'wait', id], { baseUrl: t.url });
    expect(JSON.parse(json.stdout).result).toEqual(EXAMPLE_RESULT);

    const missing = await htask(['submit', '--task-type', 'real_world_verification', '--schema', path.join(dir, 'none.json')], { baseUrl: t.url });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('none.json is not a readable JSON file');
  });
});
