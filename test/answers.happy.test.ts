import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../src/domain/answers/answer-example.js';
import { verifyReceipt } from '../src/receipts/verify.js';
import { pngImage, uploadOk } from './attachments.support.js';
import { adminGet, type Json, patchOk, submit } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp, validTask } from './support/app.js';

// An independent RFC 8785 implementation, as a client would use, not the service's own helper.
const canonicalize = createRequire(import.meta.url)('canonicalize') as (value: unknown) => string;
const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

describe.each(STORES)('structured answers on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock });

  async function publicTask(id: string): Promise<Json> {
    const res = await fetch(`${t.url}/api/v1/tasks/${id}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Json;
  }

  it('keeps the response schema as part of the request: returned as given, structured_json by default, covered by request_sha256', async () => {
    const request = validTask({ response_schema: EXAMPLE_RESPONSE_SCHEMA, requester: 'agent-7' });
    const id = await submit(t, request);
    const task = await publicTask(id);
    expect(task.response_schema).toEqual(EXAMPLE_RESPONSE_SCHEMA);
    expect(JSON.stringify(task.response_schema)).toBe(JSON.stringify(EXAMPLE_RESPONSE_SCHEMA));
    expect(task.output_format).toBe('structured_json');
    expect(task.result).toBeNull();
    const admin = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    const { contact_email: _private, ...asked } = request;
    expect(admin.request_sha256).toBe(sha256(canonicalize(asked)));
    expect(admin.response_schema).toEqual(EXAMPLE_RESPONSE_SCHEMA);
  });

  it("the submission's message says where the result will be: result with a schema, operator_notes without (issue 51)", async () => {
    const poll = { delivery: 'status_poll', contact_email: undefined };
    const withSchema = await postJson(`${t.url}/api/v1/tasks`, validTask({ ...poll, response_schema: EXAMPLE_RESPONSE_SCHEMA }));
    expect(withSchema.status).toBe(202);
    const schemaMessage = ((await withSchema.json()) as Json).message as string;
    expect(schemaMessage).toContain('the result will appear in result');
    expect(schemaMessage).not.toContain('operator_notes');
    const plain = await postJson(`${t.url}/api/v1/tasks`, validTask({ ...poll, description: 'Photograph the notice board at the town hall.' }));
    expect(plain.status).toBe(202);
    expect(((await plain.json()) as Json).message).toContain('the result will appear in operator_notes');
  });

  it('keeps an explicit output_format beside a schema, and null schema and result on a task without one', async () => {
    const withFormat = await publicTask(await submit(t, { response_schema: { type: 'object' }, output_format: 'text_report' }));
    expect(withFormat.output_format).toBe('text_report');
    const plain = await publicTask(await submit(t));
    expect(plain.response_schema).toBeNull();
    expect(plain.result).toBeNull();
    expect(plain.output_format).toBe('text_report');
  });

  it('delivers a valid result: the public result, operator_notes as its canonical JSON, and a receipt binding it, files beside it', async () => {
    const id = await submit(t, { response_schema: EXAMPLE_RESPONSE_SCHEMA, delivery: 'status_poll', contact_email: undefined });
    await patchOk(t, id, { status: 'accepted' });
    const file = await uploadOk(t, id, await pngImage(), { type: 'image/png', name: 'door-sign.png' });
    // Key order as an operator might send it, not canonical: the deliverable is canonicalized.
    const sent = {
      note: EXAMPLE_RESULT.note,
      hours: EXAMPLE_RESULT.hours,
      checked_on: EXAMPLE_RESULT.checked_on,
      how_checked: 'sign_on_door',
      open_on_sundays: true,
    };
    const delivered = await patchOk(t, id, { status: 'delivered', result: sent });
    expect(delivered.result).toEqual(EXAMPLE_RESULT);
    const task = await publicTask(id);
    expect(task.status).toBe('delivered');
    expect(task.result).toEqual(EXAMPLE_RESULT);
    expect(task.operator_notes).toBe(canonicalize(EXAMPLE_RESULT));
    expect(task.deliverable_sha256).toBe(sha256(canonicalize(EXAMPLE_RESULT)));
    expect((task.attachments as Json[]).map((a) => a.sha256)).toEqual([file.sha256]);

    const jwks = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
    const { payload } = await jwtVerify(String(task.receipt), createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
    expect(payload.deliverable_sha256).toBe(sha256(canonicalize(task.result)));
    expect((payload.attachments as Json[]).map((a) => a.sha256)).toEqual([file.sha256]);

    // The verifier any client runs: the canonical JSON of the result it read is the deliverable.
    const verdict = await verifyReceipt(String(task.receipt), { jwks, expectedTaskId: id, operatorNotes: canonicalize(task.result) });
    expect(verdict.valid).toBe(true);
    const tampered = await verifyReceipt(String(task.receipt), { jwks, operatorNotes: canonicalize({ ...EXAMPLE_RESULT, open_on_sundays: false }) });
    expect(tampered.checks.find((c) => c.name === 'deliverable')?.ok).toBe(false);
  });

  it('delivers a task without a schema exactly as before', async () => {
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted' });
    const task = await patchOk(t, id, { status: 'delivered', operator_notes: 'Open 8:00–12:00 on Sundays.' });
    expect(task.operator_notes).toBe('Open 8:00–12:00 on Sundays.');
    expect(task.result).toBeNull();
    expect(task.deliverable_sha256).toBe(sha256('Open 8:00–12:00 on Sundays.'));
  });
});
