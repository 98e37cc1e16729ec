import { describe, expect, it } from 'vitest';
import { contentDisposition, dispositionFileName, safeFileName } from '../src/domain/attachments.js';
import { sha256Hex, uploadOk } from './attachments.support.js';
import { type Json, patchOk, taskIn } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';

describe('safe file names', () => {
  it.each([
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\system32\\cmd.exe', 'cmd.exe'],
    ['a\u0000b\r\nc\u0007.txt', 'abc.txt'],
    ['invoice\u202Efdp.exe', 'invoicefdp.exe'],
    ['\u2066evil\u2069.jpg', 'evil.jpg'],
    ['...hidden', 'hidden'],
    ['CON.txt', '_CON.txt'],
    ['a<b>:c"d|e?f*.png', 'a_b__c_d_e_f_.png'],
    ['', 'file.bin'],
    ['../', 'file.bin'],
  ])('%j becomes %j', (raw, safe) => {
    expect(safeFileName(raw, 'file.bin')).toBe(safe);
  });

  it('cuts a 10,000-character name to 120 characters, keeping the extension', () => {
    const name = safeFileName(`${'x'.repeat(10_000)}.jpg`, 'file.bin');
    expect([...name]).toHaveLength(120);
    expect(name.endsWith('.jpg')).toBe(true);
  });

  it('reads RFC 6266 names, preferring filename*', () => {
    expect(dispositionFileName(`attachment; filename="fallback.jpg"; filename*=UTF-8''%C3%A9t%C3%A9.jpg`)).toBe('été.jpg');
    expect(dispositionFileName('attachment; filename="quoted \\"name\\".txt"')).toBe('quoted "name".txt');
    expect(dispositionFileName('attachment; filename=plain.txt')).toBe('plain.txt');
    expect(dispositionFileName(`attachment; filename*=UTF-8''%E0%A4%A`)).toBeUndefined();
  });

  it('writes an ASCII filename and the exact UTF-8 name in filename*', () => {
    expect(contentDisposition('été "1".jpg')).toBe(`attachment; filename="ete _1_.jpg"; filename*=UTF-8''%C3%A9t%C3%A9%20%221%22.jpg`);
    expect(contentDisposition('日本.png')).toBe(`attachment; filename=".png"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.png`);
  });
});

describe.each(STORES)('attachment security on %s', (store) => {
  const t = useTestApp({ store });

  async function deliverWith(
    files: Array<{ body: Buffer | string; type: string; disposition: string }>,
  ): Promise<{ id: string; task: Json; uploaded: Json[] }> {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const uploaded: Json[] = [];
    for (const f of files) uploaded.push(await uploadOk(t, id, f.body, { type: f.type, disposition: f.disposition }));
    const task = await patchOk(t, id, { status: 'delivered', operator_notes: 'Files attached.' });
    return { id, task, uploaded };
  }

  it('stores hostile names under safe ones and serves them only as downloads', async () => {
    const { id, uploaded } = await deliverWith([
      { body: 'root:x:0:0', type: 'text/plain', disposition: 'attachment; filename="../../etc/passwd"' },
      { body: 'bidi', type: 'text/plain', disposition: `attachment; filename*=UTF-8''report%E2%80%AEfdp.exe` },
      { body: 'long', type: 'text/plain', disposition: `attachment; filename="${'n'.repeat(10_000)}.txt"` },
      { body: 'ctl', type: 'text/plain', disposition: `attachment; filename*=UTF-8''a%0D%0ASet-Cookie%3A%20x%3D1.txt` },
      { body: 'none', type: 'text/plain', disposition: 'attachment' },
    ]);
    expect(uploaded.map((u) => u.name)).toEqual(['passwd', 'reportfdp.exe', `${'n'.repeat(116)}.txt`, 'aSet-Cookie_ x=1.txt', 'file.txt']);
    for (const file of uploaded) {
      const res = await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(file.attachment_id)}`);
      const disposition = res.headers.get('content-disposition') ?? '';
      expect(disposition).toMatch(/^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9%._~!-]+$/);
      expect(disposition).not.toMatch(/[\r\n]|\.\.\//);
      await res.arrayBuffer();
    }
  });

  it('never trusts the declared type: HTML, SVG and a fake JPEG are octet-streams served as downloads', async () => {
    const html = '<!doctype html><script>alert(document.cookie)</script>';
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    const { id, uploaded } = await deliverWith([
      { body: html, type: 'text/html', disposition: 'attachment; filename="page.html"' },
      { body: svg, type: 'image/svg+xml', disposition: 'attachment; filename="logo.svg"' },
      { body: html, type: 'image/jpeg', disposition: 'attachment; filename="photo.jpg"' },
      { body: 'a,b\n1,2\n', type: 'text/csv', disposition: 'attachment; filename="data.csv"' },
    ]);
    expect(uploaded.map((u) => u.media_type)).toEqual(['application/octet-stream', 'application/octet-stream', 'application/octet-stream', 'text/csv']);
    for (const file of uploaded) {
      const res = await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(file.attachment_id)}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(file.media_type);
      expect(res.headers.get('content-disposition')).toMatch(/^attachment;/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(sha256Hex(Buffer.from(await res.arrayBuffer()))).toBe(file.sha256);
    }
    // A fake JPEG gets no thumbnail either.
    expect((await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(uploaded[2]?.attachment_id)}/thumbnail`)).status).toBe(404);
  });

  it('escapes file names on the status page and in its markdown', async () => {
    const { id } = await deliverWith([{ body: 'x', type: 'text/plain', disposition: `attachment; filename="<img src=x onerror=alert(1)>.txt"` }]);
    const page = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('_img src=x onerror=alert(1)_.txt');
    const markdown = await (await fetch(`${t.url}/tasks?id=${id}`, { headers: { accept: 'text/markdown' } })).text();
    expect(markdown).toContain('_img src=x onerror=alert(1)_.txt');
  });

  it('keeps files private before delivery, thumbnails included', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const file = await uploadOk(t, id, 'secret draft', { type: 'text/plain', name: 'draft.txt' });
    expect((await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(file.attachment_id)}`)).status).toBe(404);
    expect((await fetch(`${t.url}/api/v1/tasks/${id}/attachments/${String(file.attachment_id)}/thumbnail`)).status).toBe(404);
    // The file of one task is not reachable through another task's id.
    const other = await taskIn(t, 'delivered');
    expect((await fetch(`${t.url}/api/v1/tasks/${other}/attachments/${String(file.attachment_id)}`)).status).toBe(404);
  });

  it('requires the console session and its CSRF token to upload through the console', async () => {
    const id = await taskIn(t, 'accepted', { location_required: false });
    const anonymous = await fetch(`${t.url}/operator/tasks/${id}/attachments`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(anonymous.status).toBe(401);
    // Signed in, but without the token (a cross-site form could not send the header).
    const login = await fetch(`${t.url}/operator/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'key=test-admin-key-0123456789&next=%2Foperator',
      redirect: 'manual',
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const noToken = await fetch(`${t.url}/operator/tasks/${id}/attachments`, { method: 'POST', headers: { cookie, 'content-type': 'text/plain' }, body: 'x' });
    expect(noToken.status).toBe(401);
    const wrong = await fetch(`${t.url}/operator/tasks/${id}/attachments`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'text/plain', 'x-csrf-token': 'forged' },
      body: 'x',
    });
    expect(wrong.status).toBe(401);
    const list = (await (
      await fetch(`${t.url}/api/v1/admin/tasks/${id}/attachments`, { headers: { authorization: 'Bearer test-admin-key-0123456789' } })
    ).json()) as { attachments: Json[] };
    expect(list.attachments).toEqual([]);
  });

  it('refuses a download Range it cannot satisfy without a body, and ignores multiple ranges', async () => {
    const { id, uploaded } = await deliverWith([{ body: '0123456789', type: 'text/plain', disposition: 'attachment; filename="digits.txt"' }]);
    const url = `${t.url}/api/v1/tasks/${id}/attachments/${String(uploaded[0]?.attachment_id)}`;
    const multi = await fetch(url, { headers: { range: 'bytes=0-1,4-5' } });
    expect(multi.status).toBe(200);
    expect(await multi.text()).toBe('0123456789');
    const garbage = await fetch(url, { headers: { range: 'bytes=abc' } });
    expect(garbage.status).toBe(200);
    await garbage.arrayBuffer();
    const zero = await fetch(url, { headers: { range: 'bytes=-0' } });
    expect(zero.status).toBe(416);
    // If-Range with a stale validator: the whole file.
    const stale = await fetch(url, { headers: { range: 'bytes=0-1', 'if-range': '"stale"' } });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();
  });
});
