import { beforeAll, describe, expect, it } from 'vitest';
import { postJson, STORES, startTestApp, useTestApp, validTask } from './support/app.js';

type ErrorBody = { error: string; message: string; details?: string[] };

async function errorOf(res: Response): Promise<ErrorBody> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as ErrorBody;
  expect(typeof body.message).toBe('string');
  expect(JSON.stringify(body)).not.toMatch(/\bat \S+\.(ts|js):\d+|node_modules|stack/i);
  return body;
}

describe.each(STORES)('bad input on %s', (store) => {
  let tasks: string;
  const t = useTestApp({ store });
  beforeAll(async () => {
    tasks = `${t.url}/api/v1/tasks`;
  });

  it('400 invalid_json for a body that is not JSON', async () => {
    const res = await postJson(tasks, '{"task_type": ');
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toBe('invalid_json');
  });

  it('400 invalid_json for an empty JSON body', async () => {
    const res = await fetch(tasks, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toBe('invalid_json');
  });

  it.each([['[1,2]'], ['"a string"'], ['42'], ['null'], ['true']])('400 malformed_request for JSON that is not an object: %s', async (body) => {
    const res = await postJson(tasks, body);
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.error).toBe('malformed_request');
    expect(error.details?.length).toBeGreaterThan(0);
  });

  it('400 malformed_request for a POST without a body', async () => {
    const res = await fetch(tasks, { method: 'POST' });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toBe('malformed_request');
  });

  it('400 for a body carrying __proto__', async () => {
    const res = await postJson(tasks, '{"__proto__": {"admin": true}, "task_type": "data_collection"}');
    expect(res.status).toBe(400);
    expect(['invalid_json', 'malformed_request']).toContain((await errorOf(res)).error);
  });

  it('413 payload_too_large over 64 KB', async () => {
    const res = await postJson(tasks, validTask({ description: 'x'.repeat(70 * 1024) }));
    expect(res.status).toBe(413);
    expect((await errorOf(res)).error).toBe('payload_too_large');
  });

  it('accepts a body just under 64 KB that is otherwise invalid only by length (422, not 413)', async () => {
    const res = await postJson(tasks, validTask({ description: 'x'.repeat(60 * 1024) }));
    expect(res.status).toBe(422);
  });

  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['multipart/form-data; boundary=x'], ['application/xml']])(
    '415 unsupported_media_type for %s',
    async (type) => {
      const res = await fetch(tasks, { method: 'POST', headers: { 'content-type': type }, body: 'task_type=data_collection' });
      expect(res.status).toBe(415);
      expect((await errorOf(res)).error).toBe('unsupported_media_type');
    },
  );

  it('accepts application/json with a charset', async () => {
    const res = await fetch(tasks, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(validTask()) });
    expect(res.status).toBe(202);
  });

  it.each([
    ['DELETE', '/api/v1/tasks', 'POST'],
    ['PUT', '/api/v1/tasks', 'POST'],
    ['GET', '/api/v1/messages', 'POST'],
    ['POST', '/api/v1/health', 'GET'],
    ['DELETE', '/api/v1/tasks/task-2030-00000000000000000000000000000000', 'GET'],
  ])('405 method_not_allowed for %s %s with Allow', async (method, path, allowed) => {
    const res = await fetch(`${t.url}${path}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain(allowed);
    expect((await errorOf(res)).error).toBe('method_not_allowed');
  });

  it('422 validation_failed lists every failing field at once, each naming its field', async () => {
    const res = await postJson(tasks, {
      task_type: 'teleportation',
      description: 'short',
      location_required: 'yes',
      location_detail: 'x'.repeat(501),
      deadline: 'next tuesday',
      output_format: 'y'.repeat(201),
      budget_usd: -1,
      contact_email: 'not-an-email',
      delivery: 'pigeon',
      requester: 'r'.repeat(201),
    });
    expect(res.status).toBe(422);
    const error = await errorOf(res);
    expect(error.error).toBe('validation_failed');
    const fields = [
      'task_type',
      'description',
      'location_required',
      'location_detail',
      'deadline',
      'output_format',
      'budget_usd',
      'contact_email',
      'delivery',
      'requester',
    ];
    expect(error.details).toHaveLength(fields.length);
    for (const field of fields) expect(error.details?.some((d) => d.startsWith(`${field} `))).toBe(true);
    expect(JSON.stringify(error)).not.toContain('not-an-email');
  });

  it('422 when required fields are missing', async () => {
    const res = await postJson(tasks, {});
    expect(res.status).toBe(422);
    const error = await errorOf(res);
    expect(error.details).toEqual(
      expect.arrayContaining([expect.stringMatching(/^task_type /), expect.stringMatching(/^description /), expect.stringMatching(/^contact_email /)]),
    );
  });

  it('422 when contact_email is missing for e-mail delivery', async () => {
    const { contact_email: _dropped, ...task } = validTask();
    const res = await postJson(tasks, task);
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details).toEqual(['contact_email is required unless delivery is "status_poll"']);
  });

  it.each([['2020-01-01T00:00:00Z'], ['2030-03-10T09:59:59Z'], ['2030-03-10T11:00:00+02:00'], ['2030-03-10T09:00:00']])(
    '422 for a deadline in the past: %s',
    async (deadline) => {
      const res = await postJson(tasks, validTask({ deadline }));
      expect(res.status).toBe(422);
      expect((await errorOf(res)).details).toEqual(['deadline must be in the future']);
    },
  );

  it.each([['2030-02-30T10:00:00Z'], ['2030-13-01T10:00:00Z'], ['31/12/2030'], ['2030-12-31T25:00:00Z']])(
    '422 for an impossible deadline: %s',
    async (deadline) => {
      const res = await postJson(tasks, validTask({ deadline }));
      expect(res.status).toBe(422);
      expect((await errorOf(res)).details?.[0]).toMatch(/^deadline must be an ISO 8601 date-time/);
    },
  );

  it('accepts a future deadline given with an offset', async () => {
    const res = await postJson(tasks, validTask({ deadline: '2030-03-10T13:00:00+02:00' }));
    expect(res.status).toBe(202);
  });

  it('422 for a description of only spaces', async () => {
    const res = await postJson(tasks, validTask({ description: ' '.repeat(20) }));
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details?.[0]).toMatch(/^description /);
  });

  it('accepts descriptions of exactly 10 and 5000 characters and refuses 9 and 5001', async () => {
    expect((await postJson(tasks, validTask({ description: 'a'.repeat(10) }))).status).toBe(202);
    expect((await postJson(tasks, validTask({ description: 'b'.repeat(5000) }))).status).toBe(202);
    expect((await postJson(tasks, validTask({ description: 'c'.repeat(9) }))).status).toBe(422);
    expect((await postJson(tasks, validTask({ description: 'd'.repeat(5001) }))).status).toBe(422);
  });

  it('404 task_not_found for an unknown task id, and for a malformed one', async () => {
    for (const id of ['task-2030-00000000000000000000000000000000', 'nope', '..%2F..%2Fetc']) {
      const res = await fetch(`${t.url}/api/v1/tasks/${id}`);
      expect(res.status).toBe(404);
      expect((await errorOf(res)).error).toBe('task_not_found');
    }
  });

  it('404 with a markdown body that points at the real endpoints for unknown paths', async () => {
    const res = await fetch(`${t.url}/api/v2/tasks`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/markdown/);
    const text = await res.text();
    expect(text).toContain('not_found');
    expect(text).toContain('/api/v1/tasks');
    expect(text).toContain('/openapi.json');
  });

  it('404 not_found as JSON for clients that accept only JSON', async () => {
    const res = await fetch(`${t.url}/nowhere`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).error).toBe('not_found');
  });

  it('422 for an invalid message, naming every field', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, { message: 'hey', reply_to: 'nobody', from: 'f'.repeat(201), subject: 's'.repeat(201) });
    expect(res.status).toBe(422);
    const error = await errorOf(res);
    expect(error.error).toBe('validation_failed');
    for (const field of ['message', 'reply_to', 'from', 'subject']) expect(error.details?.some((d) => d.startsWith(`${field} `))).toBe(true);
  });

  it('422 for a message without reply_to', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, { message: 'Hello there, operator.' });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details).toEqual([expect.stringMatching(/^reply_to /)]);
  });

  it('400 malformed_request for a malformed Idempotency-Key', async () => {
    const res = await postJson(tasks, validTask(), { 'idempotency-key': 'x'.repeat(300) });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toBe('malformed_request');
  });

  it('never sends WWW-Authenticate, whatever the response', async () => {
    const responses = await Promise.all([
      fetch(`${t.url}/api/v1/health`),
      fetch(`${t.url}/api/v1/tasks/nope`),
      postJson(tasks, '{'),
      fetch(`${t.url}/unknown`),
      fetch(`${t.url}/api/v1/admin/tasks`),
    ]);
    for (const res of responses) expect(res.headers.get('www-authenticate')).toBeNull();
  });
});

describe('health when the store is down', () => {
  it('answers 503 with a contract error body', async () => {
    const t = await startTestApp();
    try {
      await t.store.close();
      const res = await fetch(`${t.url}/api/v1/health`);
      expect(res.status).toBe(503);
      const body = await errorOf(res);
      expect(body.error).toBe('service_unavailable');
    } finally {
      await t.app.close();
    }
  });
});

describe.each(STORES)('NUL characters on %s', (store) => {
  it('are refused with 422 in any text field of tasks and messages, never a 500', async () => {
    const t = await startTestApp({ store });
    try {
      const task = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: 'Count the benches\u0000 in the park.', requester: 'bot\u0000' }));
      expect(task.status).toBe(422);
      expect(((await task.json()) as { details: string[] }).details).toEqual([
        'description must not contain NUL characters',
        'requester must not contain NUL characters',
      ]);
      const message = await postJson(`${t.url}/api/v1/messages`, { message: 'Hello operator', reply_to: 'agent@mail.example-agent.dev', subject: 'a\u0000b' });
      expect(message.status).toBe(422);
      expect(((await message.json()) as { details: string[] }).details).toEqual(['subject must not contain NUL characters']);
    } finally {
      await t.close();
    }
  });
});

describe.each(STORES)('bodies no API field needs on %s', (store) => {
  const t = useTestApp({ store });

  it('400 malformed_request for a body nested deeper than any field goes', async () => {
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    for (const path of ['/api/v1/tasks', '/api/v1/messages']) {
      const res = await postJson(`${t.url}${path}`, deep, { 'idempotency-key': 'deep-1' });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).details).toEqual(['body must not nest more than 32 levels']);
    }
  });

  it('422 naming the field for a NUL character anywhere in an API body, the operator API included', async () => {
    const res = await postJson(
      `${t.url}/api/v1/admin/blocklist`,
      { kind: 'requester', value: 'bot\u0000', reason: 'x' },
      { authorization: 'Bearer test-admin-key-0123456789' },
    );
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details).toEqual(['value must not contain NUL characters']);
  });

  it('400 malformed_request for a NUL character in the URL', async () => {
    for (const path of ['/api/v1/tasks/%00', '/api/v1/services?cursor=%00', '/api/v1/admin/tasks/x%00y']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status).toBe(400);
      expect((await errorOf(res)).error).toBe('malformed_request');
    }
  });
});
