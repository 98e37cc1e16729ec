import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { ADMIN, type Json } from './operator.support.js';
import type { TestApp } from './support/app.js';

/** Helpers of the attachment suites. */

export const sha256Hex = (data: Buffer | Uint8Array) => createHash('sha256').update(data).digest('hex');

/** A real JPEG photo carrying EXIF with GPS tags, camera make and orientation 6 (rotate 90°). */
export async function photoWithGps(width = 64, height = 48): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .jpeg({ quality: 90 })
    .withMetadata({ orientation: 6 })
    .withExifMerge({
      IFD0: { Make: 'TestCam', Model: 'Phone 9' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 2964/100', GPSLongitudeRef: 'E', GPSLongitude: '2/1 17/1 4032/100' },
    })
    .toBuffer();
}

/** Whether an image's EXIF holds a GPS IFD (tag 0x8825, either byte order). */
export async function hasGps(image: Buffer): Promise<boolean> {
  const exif = (await sharp(image).metadata()).exif;
  return exif !== undefined && (exif.includes(Buffer.from([0x88, 0x25])) || exif.includes(Buffer.from([0x25, 0x88])));
}

export async function pngImage(): Promise<Buffer> {
  return sharp({ create: { width: 40, height: 30, channels: 4, background: { r: 0, g: 100, b: 200, alpha: 1 } } })
    .png()
    .withExif({ IFD0: { Artist: 'Someone Private' } })
    .toBuffer();
}

export interface UploadOptions {
  type?: string;
  /** The full Content-Disposition header; default built from `name`. */
  disposition?: string;
  name?: string;
  headers?: Record<string, string>;
}

export async function upload(t: TestApp, taskId: string, body: Buffer | string, options: UploadOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...ADMIN, 'content-type': options.type ?? 'application/octet-stream', ...options.headers };
  const disposition = options.disposition ?? (options.name !== undefined ? `attachment; filename="${options.name}"` : undefined);
  if (disposition !== undefined) headers['content-disposition'] = disposition;
  return fetch(`${t.url}/api/v1/admin/tasks/${taskId}/attachments`, { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });
}

export async function uploadOk(t: TestApp, taskId: string, body: Buffer | string, options: UploadOptions = {}): Promise<Json> {
  const res = await upload(t, taskId, body, options);
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Json;
}

/** Rows left in the blob tables (to prove an interrupted upload leaves nothing). */
export async function storedRows(t: TestApp): Promise<{ chunks: number; blobs: number; attachments: number }> {
  const count = async (table: 'attachment_chunks' | 'attachment_blobs' | 'attachments') => {
    const row = await t.store.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return { chunks: await count('attachment_chunks'), blobs: await count('attachment_blobs'), attachments: await count('attachments') };
}
