import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReceiptPayload, receiptPayload } from '../src/receipts/payload.js';
import { signReceipt } from '../src/receipts/sign.js';
import { verifyReceipt } from '../src/receipts/verify.js';
import { photoWithGps, uploadOk } from './attachments.support.js';
import { call, connectClient } from './mcp.support.js';
import { type Json, patchOk, taskIn } from './operator.support.js';
import { runCli } from './receipts.support.js';
import { STORES, useTestApp } from './support/app.js';

describe.each(STORES)('receipts binding files on %s', (store) => {
  const t = useTestApp({ store });
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'hts-files-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function jwks(): Promise<JSONWebKeySet> {
    return (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
  }

  async function deliveredWithFiles(): Promise<{ task: Json; files: Array<{ name: string; data: Buffer }> }> {
    const id = await taskIn(t, 'accepted', { location_required: false });
    await uploadOk(t, id, await photoWithGps(), { type: 'image/jpeg', name: 'photo.jpg' });
    await uploadOk(t, id, 'measurements: 12 cm', { type: 'text/plain', name: 'notes.txt' });
    const task = await patchOk(t, id, { status: 'delivered', operator_notes: 'See files.' });
    const files: Array<{ name: string; data: Buffer }> = [];
    for (const file of task.attachments as Json[]) {
      const res = await fetch(`${t.url}${new URL(String(file.url)).pathname}`);
      files.push({ name: String(file.name), data: Buffer.from(await res.arrayBuffer()) });
    }
    return { task, files };
  }

  it('verifyReceipt checks downloaded files against the signed list', async () => {
    const { task, files } = await deliveredWithFiles();
    const ok = await verifyReceipt(String(task.receipt), { jwks: await jwks(), expectedTaskId: String(task.task_id), files });
    expect(ok.valid).toBe(true);
    expect(ok.checks.find((c) => c.name === 'attachments')).toMatchObject({ ok: true, detail: 'all 2 file(s) match their signed sha256' });

    const altered = files.map((f, i) => (i === 1 ? { name: f.name, data: Buffer.from('measurements: 13 cm') } : f));
    const bad = await verifyReceipt(String(task.receipt), { jwks: await jwks(), files: altered });
    expect(bad.valid).toBe(false);
    const detail = bad.checks.find((c) => c.name === 'attachments')?.detail ?? '';
    expect(detail).toContain('notes.txt');
    expect(detail).toContain('missing or altered');
    expect(detail).toContain('is not covered by the receipt');

    const missing = await verifyReceipt(String(task.receipt), { jwks: await jwks(), files: files.slice(0, 1) });
    expect(missing.valid).toBe(false);
  });

  it('the CLI checks a directory of downloaded files (--files DIR)', async () => {
    const { task, files } = await deliveredWithFiles();
    const good = path.join(dir, 'good');
    mkdirSync(good);
    for (const f of files) writeFileSync(path.join(good, f.name), f.data);
    const ok = await runCli('verify-receipt', [String(task.task_id), '--base-url', t.url, '--issuer', t.config.baseUrl, '--files', good]);
    expect(ok.stdout).toContain('✓ attachments');
    expect(ok.stdout).toContain('file          photo.jpg (image/jpeg');
    expect(ok.code).toBe(0);

    writeFileSync(path.join(good, 'notes.txt'), 'tampered');
    const bad = await runCli('verify-receipt', [String(task.task_id), '--base-url', t.url, '--issuer', t.config.baseUrl, '--files', good]);
    expect(bad.stdout).toContain('✗ attachments');
    expect(bad.stdout).toContain('INVALID');
    expect(bad.code).toBe(1);
  });

  it('version-1 receipts (issued before files existed) keep verifying', async () => {
    const id = await taskIn(t, 'accepted');
    const now = t.clock.now();
    const v2 = receiptPayload(
      t.config.baseUrl,
      {
        id,
        task_type: 'real_world_verification',
        delivery: 'email',
        operator_notes: 'Old style.',
        request_sha256: 'a'.repeat(64),
        created_at: '2030-03-10T10:00:00.000Z',
        seen_by_operator_at: null,
        accepted_at: null,
        delivered_at: '2030-03-10T11:00:00.000Z',
        attachments: [],
      },
      now,
    );
    const { attachments: _none, ...rest } = v2;
    const v1: ReceiptPayload = { ...rest, receipt_version: 1 };
    const receipt = await signReceipt(t.store.db, v1, now);
    const result = await verifyReceipt(receipt, { jwks: await jwks(), expectedTaskId: id, operatorNotes: 'Old style.' });
    expect(result.valid).toBe(true);
    expect(result.checks.find((c) => c.name === 'payload')?.detail).toBe('receipt_version 1, sub = task_id');
    // Checking files against a v1 receipt: it signs none.
    expect((await verifyReceipt(receipt, { jwks: await jwks(), files: [] })).valid).toBe(true);
  });

  it('MCP check_task_status lists the files with URLs and hashes, no bytes inline', async () => {
    const { task } = await deliveredWithFiles();
    const client = await connectClient(t);
    try {
      const result = await call(client, 'check_task_status', { task_id: String(task.task_id) });
      expect(result.isError).toBeFalsy();
      const files = result.structuredContent.attachments as Json[];
      expect(files).toEqual(task.attachments);
      for (const file of files) {
        expect(Object.keys(file).sort()).toEqual(['attachment_id', 'media_type', 'name', 'sha256', 'size', 'url']);
        expect(String(file.url)).toBe(`${t.config.baseUrl}/api/v1/tasks/${String(task.task_id)}/attachments/${String(file.attachment_id)}`);
      }
      expect(result.content.every((block) => block.type === 'text')).toBe(true);
    } finally {
      await client.close();
    }
  });
});
