import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../src/domain/canonical.js';
import { clientHash } from '../src/domain/network/client.js';
import { buildSubmissionResponse, buildTaskRow } from '../src/services/tasks/tasks.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

/**
 * Issue 33, finding 6: an idempotent replay and the blocklist. Decided: the replay wins — it
 * creates nothing and answers only what the client was already given, and a blocked client may
 * still read its tasks. Both the look-up before validation and the check inside the submission's
 * transaction (which decides when a block lands between the two) must agree.
 */

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

describe.each(STORES)('an idempotent replay after a block on %s', (store) => {
  const t = useTestApp({ store, env: { TRUST_PROXY: '1' } });
  const tasks = () => `${t.url}/api/v1/tasks`;

  it('replays the original 202 to a blocked client, and refuses anything new with 403', async () => {
    const ip = '198.51.100.50';
    const body = validTask();
    const first = await postJson(tasks(), body, { 'x-forwarded-for': ip, 'idempotency-key': 'replay-after-block' });
    expect(first.status).toBe(202);
    const original = (await first.json()) as { task_id: string };
    expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: ip }, admin)).status).toBe(201);

    const again = await postJson(tasks(), body, { 'x-forwarded-for': ip, 'idempotency-key': 'replay-after-block' });
    expect(again.status).toBe(202);
    expect(((await again.json()) as { task_id: string }).task_id).toBe(original.task_id);
    const hash = clientHash(t.deps.secret, ip);
    const stored = await t.store.db.selectFrom('tasks').select('id').where('client_hash', '=', hash).execute();
    expect(stored).toHaveLength(1);
    // Another payload under the key is still 422, and a new key is the block's 403.
    expect((await postJson(tasks(), validTask(), { 'x-forwarded-for': ip, 'idempotency-key': 'replay-after-block' })).status).toBe(422);
    expect((await postJson(tasks(), validTask(), { 'x-forwarded-for': ip, 'idempotency-key': 'another-key' })).status).toBe(403);
  });

  it('decides the same inside the transaction, for a block that lands after the early look-up', async () => {
    const ip = '198.51.100.51';
    const raw = validTask();
    const first = await postJson(tasks(), raw, { 'x-forwarded-for': ip, 'idempotency-key': 'in-transaction' });
    expect(first.status).toBe(202);
    const original = (await first.json()) as { task_id: string };
    expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: ip }, admin)).status).toBe(201);

    // The submission as submitTask hands it to the group commit, past its early replay look-up.
    const caller = { clientHash: clientHash(t.deps.secret, ip), source: 'api' as const, idempotencyKey: 'in-transaction' };
    const now = t.clock.now();
    const input = t.deps.validators.task(raw, now).value;
    const row = buildTaskRow(input, caller, { emailUnverified: false }, now, 12);
    const response = buildSubmissionResponse(t.config.baseUrl, row, [], 12);
    const verdict = await t.deps.submissions.submit({
      caller,
      input,
      row,
      taskId: row.id,
      dedupeKey: row.dedupe_key,
      requestHash: sha256Hex(canonicalJson(raw)),
      response: { statusCode: 202, location: response.status_url, body: response },
    });
    expect(verdict.kind).toBe('replay');
    expect(verdict.kind === 'replay' && (verdict.replay.body as { task_id: string }).task_id).toBe(original.task_id);
  });
});
