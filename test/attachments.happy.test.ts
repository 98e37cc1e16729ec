import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { deleteAttachmentsOfTask } from '../src/store/attachments/attachments-repo.js';
import { hasGps, photoWithGps, pngImage, sha256Hex, storedRows, uploadOk } from './attachments.support.js';
import { adminGet, type Json, patchOk, taskIn } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';

describe.each(STORES)('attachments on %s', (store) => {
  const t = useTestApp({ store, env: { BASE_URL: 'http://files.test' } });

  it('uploads, delivers, and serves each file with its hash, bound into a version-2 receipt', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(700_000)]);
    const photo = await photoWithGps();
    const a = await uploadOk(t, id, pdf, { type: 'application/pdf', name: 'report.pdf' });
    const b = await uploadOk(t, id, photo, { type: 'image/jpeg', name: 'IMG_0001.JPG' });
    expect(a).toMatchObject({ name: 'report.pdf', media_type: 'application/pdf', size: pdf.length, sha256: sha256Hex(pdf) });
    expect(String(a.attachment_id)).toMatch(/^att-\d{4}-[0-9a-f]{32}$/);
    expect(b).toMatchObject({ name: 'IMG_0001.JPG', media_type: 'image/jpeg' });

    // Before delivery: the public side knows nothing of them.
    const before = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(before.attachments).toBeUndefined();
    expect((await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(a.attachment_id)}`)).status).toBe(404);

    const delivered = await patchOk(t, id, { status: 'delivered', operator_notes: 'Photos and the report attached.' });
    const files = delivered.attachments as Json[];
    expect(files.map((f) => f.name)).toEqual(['report.pdf', 'IMG_0001.JPG']);
    expect(files[0]).toEqual({ ...a, url: `http://files.test/api/v1/tasks/${id}/attachments/${String(a.attachment_id)}` });

    const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(task.attachments).toEqual(files);

    for (const file of files) {
      const res = await fetch(`${t.url}${new URL(String(file.url)).pathname}`);
      expect(res.status).toBe(200);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(sha256Hex(bytes)).toBe(file.sha256);
      expect(bytes.length).toBe(file.size);
      expect(res.headers.get('content-type')).toBe(file.media_type);
      expect(res.headers.get('content-digest')).toBe(`sha-256=:${Buffer.from(String(file.sha256), 'hex').toString('base64')}:`);
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(res.headers.get('etag')).toBe(`"${String(file.sha256)}"`);
    }

    const payload = JSON.parse(Buffer.from(String(task.receipt).split('.')[1] ?? '', 'base64url').toString('utf8')) as Json;
    expect(payload.receipt_version).toBe(2);
    expect(payload.attachments).toEqual(files.map(({ name, media_type, size, sha256 }) => ({ name, media_type, size, sha256 })));
  });

  it('a delivery without files signs an empty list', async () => {
    const id = await taskIn(t, 'delivered');
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(task.attachments).toEqual([]);
    const payload = JSON.parse(Buffer.from(String(task.receipt).split('.')[1] ?? '', 'base64url').toString('utf8')) as Json;
    expect(payload).toMatchObject({ receipt_version: 2, attachments: [] });
  });

  it('strips EXIF and GPS from a photo, keeping it upright and close to the original', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const photo = await photoWithGps(64, 48);
    expect(await hasGps(photo)).toBe(true);
    expect((await sharp(photo).metadata()).orientation).toBe(6);
    const info = await uploadOk(t, id, photo, { type: 'image/jpeg', name: 'photo.jpg' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'See the photo.' });
    const res = await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(info.attachment_id)}`);
    const stored = Buffer.from(await res.arrayBuffer());
    expect(sha256Hex(stored)).toBe(info.sha256);
    const meta = await sharp(stored).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.exif).toBeUndefined();
    expect(await hasGps(stored)).toBe(false);
    expect(meta.xmp).toBeUndefined();
    expect(stored.includes(Buffer.from('TestCam'))).toBe(false);
    // Orientation 6 was applied to the pixels before the tag went: the photo is now portrait.
    expect([meta.width, meta.height]).toEqual([48, 64]);
    expect(meta.orientation).toBeUndefined();
    // Quality: the colour survives re-encoding.
    const { dominant } = await sharp(stored).stats();
    expect(dominant.r).toBeGreaterThan(150);
    expect(dominant.g).toBeLessThan(80);
  });

  it('strips a photo sent without Content-Length (chunked) just the same', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const photo = await photoWithGps(66, 50);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < photo.length; i += 500) controller.enqueue(new Uint8Array(photo.subarray(i, i + 500)));
        controller.close();
      },
    });
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-admin-key-0123456789', 'content-type': 'image/jpeg', 'content-disposition': 'attachment; filename="chunked.jpg"' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(201);
    const info = (await res.json()) as Json;
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Chunked photo.' });
    const stored = Buffer.from(await (await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(info.attachment_id)}`)).arrayBuffer());
    expect(sha256Hex(stored)).toBe(info.sha256);
    expect(await hasGps(stored)).toBe(false);
    expect((await sharp(stored).metadata()).width).toBe(50);
  });

  it('strips metadata from PNG too', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const png = await pngImage();
    expect((await sharp(png).metadata()).exif).toBeDefined();
    const info = await uploadOk(t, id, png, { type: 'image/png', name: 'shot.png' });
    expect(info.media_type).toBe('image/png');
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Screenshot.' });
    const stored = Buffer.from(await (await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(info.attachment_id)}`)).arrayBuffer());
    expect((await sharp(stored).metadata()).exif).toBeUndefined();
    expect(stored.includes(Buffer.from('Someone Private'))).toBe(false);
  });

  it.each([
    ['webp', 'image/webp'],
    ['avif', 'image/avif'],
  ] as const)('strips EXIF and GPS from %s', async (format, type) => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const image = await sharp({ create: { width: 48, height: 40, channels: 3, background: '#c08020' } })
      .toFormat(format)
      .withExif({ IFD0: { Make: 'TestCam' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 2964/100' } })
      .toBuffer();
    expect(await hasGps(image)).toBe(true);
    const info = await uploadOk(t, id, image, { type, name: `photo.${format}` });
    expect(info.media_type).toBe(type);
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Photo.' });
    const stored = Buffer.from(await (await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(info.attachment_id)}`)).arrayBuffer());
    const meta = await sharp(stored).metadata();
    expect(meta.exif).toBeUndefined();
    expect(await hasGps(stored)).toBe(false);
    expect([meta.width, meta.height]).toEqual([48, 40]);
  });

  it('keeps metadata when the task has location_required, and says so to the operator', async () => {
    const id = await taskIn(t, 'accepted', { location_required: true });
    const photo = await photoWithGps();
    const info = await uploadOk(t, id, photo, { type: 'image/jpeg', name: 'where.jpg' });
    expect(info.sha256).toBe(sha256Hex(photo));
    const list = (await (await adminGet(t, `/api/v1/admin/tasks/${id}/attachments`)).json()) as { attachments: Json[] };
    expect(list.attachments[0]).toMatchObject({ attachment_id: info.attachment_id, metadata_kept: true, has_thumbnail: true });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Location photo.' });
    const stored = Buffer.from(await (await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(info.attachment_id)}`)).arrayBuffer());
    expect(stored.equals(photo)).toBe(true);
    expect(await hasGps(stored)).toBe(true);
  });

  it('serves a thumbnail of a delivered image, generated once and kept', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const big = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#3060c0' } })
      .jpeg()
      .toBuffer();
    const info = await uploadOk(t, id, big, { type: 'image/jpeg', name: 'big.jpg' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Big photo.' });
    const res = await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(info.attachment_id)}/thumbnail`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect(meta.format).toBe('webp');
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBe(320);
  });

  it('answers byte ranges, with 206, Content-Range and 416 past the end', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const video = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), randomBytes(600_000)]);
    const info = await uploadOk(t, id, video, { type: 'video/mp4', name: 'walkthrough.mp4' });
    expect(info.media_type).toBe('video/mp4');
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Video attached.' });
    const url = `${t.url}/api/v1/tasks/${id}/attachments/${String(info.attachment_id)}`;

    // A range across a chunk boundary (chunks are 256 KiB).
    const start = 262_100;
    const end = 262_300;
    const part = await fetch(url, { headers: { range: `bytes=${start}-${end}` } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes ${start}-${end}/${video.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(video.subarray(start, end + 1))).toBe(true);

    const tail = await fetch(url, { headers: { range: 'bytes=-100' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(video.subarray(video.length - 100))).toBe(true);

    const open = await fetch(url, { headers: { range: 'bytes=599990-' } });
    expect(Buffer.from(await open.arrayBuffer()).equals(video.subarray(599_990))).toBe(true);

    const past = await fetch(url, { headers: { range: `bytes=${video.length}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${video.length}`);

    const cached = await fetch(url, { headers: { 'if-none-match': `"${String(info.sha256)}"` } });
    expect(cached.status).toBe(304);

    // A browser agent on another origin can read what it needs to check and resume the file.
    const cors = await fetch(url, { headers: { origin: 'https://agent.example', range: 'bytes=0-9' } });
    expect(cors.headers.get('access-control-allow-origin')).toBe('*');
    for (const name of ['ETag', 'Content-Digest', 'Content-Range', 'Content-Disposition'])
      expect(cors.headers.get('access-control-expose-headers')).toContain(name);
    await cors.arrayBuffer();
  });

  it('lets the operator remove a file before delivery; it is not delivered', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const keep = await uploadOk(t, id, 'keep me', { type: 'text/plain', name: 'keep.txt' });
    const drop = await uploadOk(t, id, 'drop me', { type: 'text/plain', name: 'drop.txt' });
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments/${String(drop.attachment_id)}`, {
      method: 'DELETE',
      headers: { authorization: 'Bearer test-admin-key-0123456789' },
    });
    expect(res.status).toBe(204);
    const delivered = await patchOk(t, id, { status: 'delivered', operator_notes: 'One file.' });
    expect((delivered.attachments as Json[]).map((f) => f.attachment_id)).toEqual([keep.attachment_id]);
    expect(keep.media_type).toBe('text/plain');
  });

  it('stores the same content once however often it is attached', async () => {
    const one = await taskIn(t, 'accepted', { location_required: false });
    const two = await taskIn(t, 'accepted', { location_required: false });
    const data = randomBytes(300_000);
    const a = await uploadOk(t, one, data, { name: 'a.bin' });
    const b = await uploadOk(t, two, data, { name: 'b.bin' });
    expect(a.sha256).toBe(b.sha256);
    const blobs = await t.store.db.selectFrom('attachment_blobs').select('sha256').where('sha256', '=', String(a.sha256)).execute();
    expect(blobs).toHaveLength(1);
  });

  it('erases the files of a task for retention, keeping blobs another task still uses', async () => {
    const one = await taskIn(t, 'accepted', { location_required: false });
    const two = await taskIn(t, 'accepted', { location_required: false });
    const shared = randomBytes(1000);
    const photo = await uploadOk(t, one, await photoWithGps(72, 52), { type: 'image/jpeg', name: 'p.jpg' });
    await uploadOk(t, one, shared, { name: 'shared.bin' });
    const kept = await uploadOk(t, two, shared, { name: 'shared-too.bin' });
    await patchOk(t, one, { status: 'delivered', operator_notes: 'Files.' });
    const before = await storedRows(t);

    expect(await t.store.db.transaction().execute((trx) => deleteAttachmentsOfTask(trx, t.store.dialect, one))).toBe(2);
    const after = await storedRows(t);
    expect(after.attachments).toBe(before.attachments - 2);
    // The photo and its thumbnail went; the shared content stayed for the other task.
    expect(after.blobs).toBe(before.blobs - 2);
    const blobs = await t.store.db
      .selectFrom('attachment_blobs')
      .select('sha256')
      .where('sha256', 'in', [String(photo.sha256), String(kept.sha256)])
      .execute();
    expect(blobs.map((b) => b.sha256)).toEqual([String(kept.sha256)]);
    expect((await fetch(`${t.url}/api/v1/tasks/${one}/attachments/${String(photo.attachment_id)}`)).status).toBe(404);
  });
});
