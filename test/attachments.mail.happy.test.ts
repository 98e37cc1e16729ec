import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { photoWithGps, sha256Hex, uploadOk } from './attachments.support.js';
import { patchOk, taskIn } from './operator.support.js';
import { STORES, smtpOf, useTestApp } from './support/app.js';
import type { ReceivedMail } from './support/smtp.js';

const BASE_URL = 'https://hitl.example-service.dev';

interface ParsedAttachment {
  filename?: string;
  contentType: string;
  content: Buffer;
}
const attachmentsOf = (mail: ReceivedMail) => (mail.parsed as unknown as { attachments: ParsedAttachment[] }).attachments;
const deliveryOf = (id: string) => (mail: ReceivedMail) => mail.subject === `Task delivered: ${id}`;

describe.each(STORES)('delivery mail with files on %s', (store) => {
  const t = useTestApp({ store, smtp: true, background: true, env: { BASE_URL, MAIL_POLL_MS: '20' } });
  const smtp = smtpOf(t);

  it('attaches the delivered files, byte for byte what the receipt signs', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const photo = await uploadOk(t, id, await photoWithGps(), { type: 'image/jpeg', name: 'sign.jpg' });
    const notes = await uploadOk(t, id, 'Opening hours: 8-12', { type: 'text/plain', name: 'hours.txt' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Photo and transcript attached.' });
    const [mail] = await smtp.waitFor(1, deliveryOf(id), 15_000);
    const files = attachmentsOf(mail!);
    expect(files.map((f) => [f.filename, f.contentType])).toEqual([
      ['sign.jpg', 'image/jpeg'],
      ['hours.txt', 'text/plain'],
    ]);
    expect(sha256Hex(files[0]!.content)).toBe(photo.sha256);
    expect(sha256Hex(files[1]!.content)).toBe(notes.sha256);
    expect(mail!.text).toContain('attached to this mail');
    expect(mail!.text).toContain(`sha256 ${String(photo.sha256)}`);
    expect(mail!.text).toContain('--files');
    // The outbox row holds references, not bytes.
    const row = await t.store.db.selectFrom('outbox').selectAll().where('task_id', '=', id).where('kind', '=', 'task_delivered').executeTakeFirstOrThrow();
    expect(row.text_body.length + (row.html_body?.length ?? 0)).toBeLessThan(20_000);
  });

  it('sends links with hashes instead when the files total over 10 MiB', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const big = await uploadOk(t, id, randomBytes(6 * 1024 * 1024), { name: 'part1.bin' });
    const big2 = await uploadOk(t, id, randomBytes(5 * 1024 * 1024), { name: 'part2.bin' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Two large files.' });
    const [mail] = await smtp.waitFor(1, deliveryOf(id), 15_000);
    expect(attachmentsOf(mail!)).toEqual([]);
    for (const file of [big, big2]) {
      expect(mail!.text).toContain(`sha256 ${String(file.sha256)} ${BASE_URL}/api/v1/tasks/${id}/attachments/${String(file.attachment_id)}`);
      expect(mail!.html).toContain(`href="${BASE_URL}/api/v1/tasks/${id}/attachments/${String(file.attachment_id)}"`);
    }
    expect(mail!.text).toContain('too large together to attach');
  });

  it('a delivery without files mails no attachment and no file section', async () => {
    const id = await taskIn(t, 'delivered');
    const [mail] = await smtp.waitFor(1, deliveryOf(id), 15_000);
    expect(attachmentsOf(mail!)).toEqual([]);
    expect(mail!.text).not.toContain('Files (');
  });
});
