import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { photoWithGps, storedRows, upload, uploadOk } from './attachments.support.js';
import { ADMIN, type Json, patchOk, taskIn } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';

const MAX = 300_000;

describe.each(STORES)('attachment errors on %s', (store) => {
  const t = useTestApp({ store, env: { ATTACHMENT_MAX_BYTES: String(MAX), ATTACHMENTS_MAX_PER_TASK: '3' } });

  it('refuses a file over ATTACHMENT_MAX_BYTES with 413, and keeps nothing of it', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const before = await storedRows(t);
    const res = await upload(t, id, Buffer.alloc(MAX + 1, 7), { name: 'big.bin' });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'payload_too_large', limit: 'attachment_max_bytes' });
    expect(await storedRows(t)).toEqual(before);
  });

  it('cuts a streamed upload with no Content-Length at the limit', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const before = await storedRows(t);
    let sent = 0;
    // A body that would go on for 50 MB: the server must answer long before.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 50_000_000) return controller.close();
        sent += 65_536;
        controller.enqueue(new Uint8Array(65_536));
      },
    });
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments`, {
      method: 'POST',
      headers: { ...ADMIN, 'content-type': 'video/mp4' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as Json).error).toBe('payload_too_large');
    expect(sent).toBeLessThan(20_000_000);
    expect(await storedRows(t)).toEqual(before);
  });

  it('refuses the file past ATTACHMENTS_MAX_PER_TASK with 413', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    for (const n of [1, 2, 3]) await uploadOk(t, id, `file ${n}`, { type: 'text/plain', name: `${n}.txt` });
    const res = await upload(t, id, 'file 4', { type: 'text/plain', name: '4.txt' });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'payload_too_large', limit: 'attachments_per_task' });
  });

  it.each(['submitted', 'delivered', 'rejected'])('refuses an upload to a %s task with 409 invalid_transition', async (status) => {
    const id = await taskIn(t, status, { location_required: false });
    const res = await upload(t, id, 'late evidence', { type: 'text/plain', name: 'late.txt' });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: 'invalid_transition', from: status });
  });

  it('freezes files at delivery: no removal afterwards', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const file = await uploadOk(t, id, 'evidence', { type: 'text/plain', name: 'e.txt' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Done.' });
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments/${String(file.attachment_id)}`, { method: 'DELETE', headers: ADMIN });
    expect(res.status).toBe(409);
    expect(((await res.json()) as Json).error).toBe('invalid_transition');
    expect((await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(file.attachment_id)}`)).status).toBe(200);
  });

  it('answers 404 for unknown tasks, files and ids that are not ids', async () => {
    const id = await taskIn(t, 'delivered');
    expect((await upload(t, 'task-2030-00000000000000000000000000000000', 'x', { name: 'x.txt' })).status).toBe(404);
    expect((await fetch(`${t.url}/api/v1/tasks/${id}/attachments/att-2030-00000000000000000000000000000000`)).status).toBe(404);
    expect((await fetch(`${t.url}/api/v1/tasks/${id}/attachments/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
    expect((await fetch(`${t.url}/api/v1/tasks/not-a-task/attachments/x/thumbnail`)).status).toBe(404);
    const del = await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments/nope`, { method: 'DELETE', headers: ADMIN });
    expect(del.status).toBe(409);
  });

  it('refuses an empty upload with 400', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const res = await upload(t, id, '', { name: 'empty.txt' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error).toBe('malformed_request');
  });

  it('refuses a broken image whose metadata cannot be stripped with 422', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const broken = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2000, 0x41)]);
    const res = await upload(t, id, broken, { type: 'image/jpeg', name: 'broken.jpg' });
    expect(res.status).toBe(422);
    expect(((await res.json()) as Json).error).toBe('validation_failed');
  });

  it('refuses a HEIC photo this server cannot decode (its GPS could not be removed) with 415', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const heic = Buffer.concat([
      Buffer.from([0, 0, 0, 0x18]),
      Buffer.from('ftypheic'),
      Buffer.from([0, 0, 0, 0]),
      Buffer.from('mif1heic'),
      Buffer.alloc(500, 1),
    ]);
    const res = await upload(t, id, heic, { type: 'image/heic', name: 'IMG_1234.HEIC' });
    expect(res.status).toBe(415);
    expect(((await res.json()) as Json).message).toMatch(/HEIC/);
  });

  it('leaves nothing behind when the uploader hangs up halfway', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const before = await storedRows(t);
    const { port } = new URL(t.url);
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /api/v1/admin/tasks/${id}/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ADMIN.authorization}\r\n` +
            `Content-Type: application/octet-stream\r\nContent-Length: 200000\r\nContent-Disposition: attachment; filename="half.bin"\r\n\r\n`,
        );
        socket.write(Buffer.alloc(100_000, 3), () => setTimeout(() => socket.destroy(), 300));
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    // The server notices the hang-up and cleans up; give it a moment on a loaded machine.
    for (let i = 0; i < 50; i++) {
      const rows = await storedRows(t);
      if (rows.chunks === before.chunks) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await storedRows(t)).toEqual(before);
    const list = (await (await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments`, { headers: ADMIN })).json()) as { attachments: Json[] };
    expect(list.attachments).toEqual([]);
  });

  it('refuses an upload still streaming when the task is delivered, and keeps nothing of it', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const before = await storedRows(t);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new Uint8Array(270_000).fill(5));
        await gate;
        controller.enqueue(new Uint8Array(10));
        controller.close();
      },
    });
    const pending = fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments`, {
      method: 'POST',
      headers: { ...ADMIN, 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="slow.bin"' },
      body,
      duplex: 'half',
    } as RequestInit);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const delivered = await patchOk(t, id, { status: 'delivered', operator_notes: 'Delivered while a file was still uploading.' });
    expect(delivered.attachments).toEqual([]);
    release();
    const res = await pending;
    expect(res.status).toBe(409);
    expect(((await res.json()) as Json).error).toBe('invalid_transition');
    expect(await storedRows(t)).toEqual(before);
  });

  it('needs the operator key to upload, list or remove', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments`, {
      method: 'POST',
      headers: { 'content-type': 'image/jpeg' },
      body: new Uint8Array(await photoWithGps()),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect((await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments`)).status).toBe(401);
    expect((await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments/x`, { method: 'DELETE' })).status).toBe(401);
  });
});
