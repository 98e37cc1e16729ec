import { describe, expect, it } from 'vitest';
import { integrateLog } from '../src/services/receipt-log/receipt-log.js';
import { insertLeaves } from '../src/store/receipt-log/receipt-log-repo.js';
import { type Json, patchOk, submit } from './operator.support.js';
import { checkpointSignedBy, hashLeaf, merkleRoot, parseCheckpoint, parseProof, readWholeLog, rootFromInclusion, tilePath } from './receipt-log.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';

/**
 * The public receipt log (issue 52), checked from the outside by an independent checker
 * (receipt-log.support.ts): every receipt a leaf, the tree recomputed from the tiles, each proof
 * verified, checkpoints signed by the published key and consistent with each other.
 */
describe.each(STORES)('the public receipt log on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock, background: true });

  async function text(path: string): Promise<string> {
    const res = await fetch(`${t.url}${path}`);
    expect(res.status, `${path}: ${res.status}`).toBe(200);
    return res.text();
  }

  async function deliver(notes: string): Promise<Json> {
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' });
    return patchOk(t, id, { status: 'delivered', operator_notes: notes });
  }

  async function publicTask(id: string): Promise<Json> {
    return (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
  }

  async function verifyTaskProof(taskId: string, receipt: string, vkey: string): Promise<number> {
    const proof = parseProof(await text(`/api/v1/tasks/${taskId}/receipt-proof`));
    const checkpoint = parseCheckpoint(proof.checkpoint);
    expect(checkpointSignedBy(checkpoint, vkey)).toBe(true);
    const root = rootFromInclusion(proof.index, checkpoint.size, hashLeaf(Buffer.from(receipt)), proof.proof);
    expect(root?.equals(checkpoint.root), `proof of ${taskId}`).toBe(true);
    return proof.index;
  }

  it('serves the signed checkpoint of the empty tree before any receipt, and its verifier key', async () => {
    const res = await fetch(`${t.url}/log/checkpoint`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(60);
    const checkpoint = parseCheckpoint(await res.text());
    expect(checkpoint.origin).toBe(`${new URL(t.config.baseUrl).host}/log`);
    expect(checkpoint.size).toBe(0);
    expect(checkpoint.root.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    const vkey = await text('/log/vkey');
    expect(vkey.trim()).toMatch(/^[^+\s]+\/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/);
    expect(checkpointSignedBy(checkpoint, vkey)).toBe(true);
    // The manifest names the same key, so an agent pins it from /agent.json.
    const manifest = (await (await fetch(`${t.url}/agent.json`)).json()) as { trust: { receipts: { log: { vkey: string; checkpoint: string } } } };
    expect(manifest.trust.receipts.log.vkey).toBe(vkey.trim());
    expect(manifest.trust.receipts.log.checkpoint).toBe(`${t.config.baseUrl}/log/checkpoint`);
    // Another key (a forged vkey) does not verify it.
    expect(checkpointSignedBy(checkpoint, vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toBe(false);
  });

  it('logs a delivered receipt within 2 s: receipt_log_index on the public task and a tlog-proof that verifies', async () => {
    const task = await deliver('Open on Sundays from 8.');
    const id = String(task.task_id);
    const started = Date.now();
    let index: unknown = null;
    while (Date.now() - started < 2000) {
      index = (await publicTask(id)).receipt_log_index;
      if (typeof index === 'number') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(typeof index, 'integrated within 2 s').toBe('number');
    const vkey = await text('/log/vkey');
    expect(await verifyTaskProof(id, String(task.receipt), vkey)).toBe(index);
  });

  it('holds 10,000 receipts: the root recomputed from the tiles, every proof verified, checkpoints consistent', async () => {
    const vkey = await text('/log/vkey');
    const delivered: Json[] = [];
    for (let i = 0; i < 3; i++) delivered.push(await deliver(`Answer ${i}.`));
    await integrateLog(t.deps);
    const before = parseCheckpoint(await text('/log/checkpoint'));
    expect(checkpointSignedBy(before, vkey)).toBe(true);

    // Seeded through the store as the issuing transaction writes them (a delivery each would take minutes).
    const seeded = Array.from({ length: 10_000 }, (_, i) => ({
      taskId: `seed-${i}`,
      data: `seeded receipt ${i} ${store}`,
      createdAt: clock.now().toISOString(),
    }));
    await insertLeaves(t.store.db, seeded);
    for (let i = 3; i < 6; i++) delivered.push(await deliver(`Answer ${i}.`));
    await integrateLog(t.deps);
    const after = parseCheckpoint(await text('/log/checkpoint'));
    expect(checkpointSignedBy(after, vkey)).toBe(true);
    expect(after.size).toBe(before.size + 10_003);

    // The whole tree from the tiles: entries hash to the level-0 tiles, which give the signed root.
    const log = await readWholeLog(t.url, after.size);
    expect(merkleRoot(log.hashes).equals(after.root)).toBe(true);
    // Consistency: the older checkpoint's tree is a prefix of the newer one.
    expect(merkleRoot(log.hashes.slice(0, before.size)).equals(before.root)).toBe(true);
    // Level-1 tiles hold the roots of the full level-0 tiles.
    const level1 = Buffer.from(await (await fetch(`${t.url}${tilePath(1, 0, Math.floor(after.size / 256))}`)).arrayBuffer());
    for (let n = 0; n < Math.floor(after.size / 256); n++) {
      expect(level1.subarray(n * 32, n * 32 + 32).equals(merkleRoot(log.hashes.slice(n * 256, n * 256 + 256))), `level-1 hash ${n}`).toBe(true);
    }
    const seededTexts = new Set(log.entries.map((e) => e.toString()));
    for (const leaf of seeded) expect(seededTexts.has(leaf.data)).toBe(true);

    // Every delivered task's receipt is in the log, at the index its public task names.
    for (const task of delivered) {
      const id = String(task.task_id);
      const index = await verifyTaskProof(id, String(task.receipt), vkey);
      expect((await publicTask(id)).receipt_log_index).toBe(index);
      expect(log.entries[index]?.toString()).toBe(task.receipt);
    }
    // And a sample of the seeded leaves' proofs.
    for (let i = 0; i < seeded.length; i += 499) {
      const leaf = seeded[i] as (typeof seeded)[number];
      await verifyTaskProof(leaf.taskId, leaf.data, vkey);
    }

    // A full tile is immutable; a partial one is not cached for long.
    const full = await fetch(`${t.url}${tilePath(0, 0)}`);
    expect(full.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const partialWidth = after.size % 256;
    const partial = await fetch(`${t.url}${tilePath(0, Math.floor(after.size / 256), partialWidth)}`);
    expect(partial.status).toBe(200);
    expect(partial.headers.get('cache-control')).not.toContain('immutable');
  }, 120_000);
});
