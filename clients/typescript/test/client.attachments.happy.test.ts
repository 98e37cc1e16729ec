import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadOk } from '../../../test/attachments.support.js';
import { patchOk, taskIn } from '../../../test/operator.support.js';
import { STORES, useTestApp } from '../../../test/support/app.js';
import { HumanTaskClient, type ReceivedFile } from '../src/index.js';
import { htask } from './cli.support.js';

/** A delivery with files, end to end: the client and htask check the downloaded files against the v2 receipt. */

describe.each(STORES)('receipts with attachments through the clients (%s)', (store) => {
  const t = useTestApp({ store });
  let client: HumanTaskClient;
  let dir: string;
  beforeAll(() => {
    client = new HumanTaskClient({ baseUrl: t.url, issuer: t.config.baseUrl });
    dir = mkdtempSync(path.join(tmpdir(), 'htask-files-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function deliveredWithFiles(): Promise<{ id: string; files: ReceivedFile[] }> {
    const id = await taskIn(t, 'accepted', { location_required: false });
    await uploadOk(t, id, 'Sun 8:00-12:00', { type: 'text/plain', name: 'door-sign.txt' });
    await uploadOk(t, id, 'measurements: 12 cm', { type: 'text/plain', name: 'notes.txt' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'See the files.' });
    const task = await client.getTask(id);
    const files: ReceivedFile[] = [];
    for (const file of task.attachments ?? []) {
      // The URL names the configured BASE_URL; the test app listens elsewhere.
      const res = await fetch(`${t.url}${new URL(file.url).pathname}`);
      files.push({ name: file.name, data: new Uint8Array(await res.arrayBuffer()) });
    }
    return { id, files };
  }

  it('verifyReceipt with the downloaded files is valid; an altered or missing file is not', async () => {
    const { id, files } = await deliveredWithFiles();
    expect(files).toHaveLength(2);
    const verdict = await client.verifyReceipt(id, { files });
    expect(verdict).toMatchObject({ valid: true, failure: null });
    expect(verdict.payload?.receipt_version).toBe(2);
    expect(verdict.checks.at(-1)).toMatchObject({ name: 'attachments', ok: true });

    const altered = files.map((f, i) => (i === 1 ? { name: f.name, data: 'measurements: 13 cm' } : f));
    expect(await client.verifyReceipt(id, { files: altered })).toMatchObject({ valid: false, failure: 'attachments' });
    expect(await client.verifyReceipt(id, { files: files.slice(0, 1) })).toMatchObject({ valid: false, failure: 'attachments' });
  });

  it('htask verify --files DIR exits 0 with the files and 4 with a changed one', async () => {
    const { id, files } = await deliveredWithFiles();
    const folder = path.join(dir, id);
    mkdirSync(folder);
    for (const f of files) writeFileSync(path.join(folder, f.name), f.data as Uint8Array);
    const ok = await htask(['verify', id, '--files', folder, '--issuer', t.config.baseUrl], { baseUrl: t.url });
    expect(ok.stdout).toContain('✓ attachments');
    expect(ok.code).toBe(0);
    writeFileSync(path.join(folder, 'notes.txt'), 'measurements: 13 cm');
    const changed = await htask(['verify', id, '--files', folder, '--issuer', t.config.baseUrl], { baseUrl: t.url });
    expect(changed.code).toBe(4);
    expect(changed.stdout).toContain('INVALID (attachments)');
  });
});
