import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointBody, signNote } from '../../../src/receipts/log-note.js';
import { integrateLog, timestampCheckpoint } from '../../../src/services/receipt-log/receipt-log.js';
import { insertLeaves } from '../../../src/store/receipt-log/receipt-log-repo.js';
import { patchOk, submit } from '../../../test/operator.support.js';
import { useTestApp } from '../../../test/support/app.js';
import { startTestTsa, type TestTsa } from '../../../test/support/tsa.js';
import { HumanTaskClient } from '../src/index.js';
import { htask } from './cli.support.js';

/**
 * The TypeScript client and htask check a receipt's place in the public log (docs/receipt-log.md):
 * the tlog-proof, the checkpoint's signature, the inclusion path, the RFC 3161 token's imprint and
 * consistency with a checkpoint kept earlier; online and offline from files; a changed byte is
 * named by the check it breaks. Against the real app, with a real TSA (openssl).
 */
let tsa: TestTsa;
beforeAll(async () => {
  tsa = await startTestTsa();
}, 60_000);
afterAll(async () => {
  await tsa.close();
});

const flip = (line: string) => (line[0] === 'A' ? `B${line.slice(1)}` : `A${line.slice(1)}`);

describe('human-task-client and htask verify the public log', () => {
  const t = useTestApp(() => ({ env: { TSA_URL: tsa.url, TSA_CA_FILE: tsa.caFile } }));
  const dir = mkdtempSync(path.join(tmpdir(), 'htask-log-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    writeFileSync(path.join(dir, name), content);
    return path.join(dir, name);
  };
  const others = (n: number, tag: string) =>
    insertLeaves(
      t.store.db,
      Array.from({ length: n }, (_, i) => ({ taskId: null, data: `${tag} ${i}`, createdAt: new Date().toISOString() })),
    );

  it('checks proof, checkpoint, inclusion, time-stamp and consistency; names each tampered part', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url, issuer: t.config.baseUrl });
    await others(3, 'before');
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' });
    const task = await patchOk(t, id, { status: 'delivered', operator_notes: 'Open from 8.' });
    const receipt = String(task.receipt);
    // 7 leaves: not a power of two, so consistency must check the kept root itself, not only the new one.
    await others(3, 'after');
    await integrateLog(t.deps);
    await timestampCheckpoint(t.deps);
    const kept = await (await fetch(`${t.url}/log/checkpoint`)).text();

    const online = await client.verifyReceiptLog(id);
    const { receipt_log_index: index } = (await client.getTask(id)) as { receipt_log_index?: number };
    expect(index).toBeTypeOf('number');
    expect(online).toMatchObject({ valid: true, failure: null, index, treeSize: 7 });
    expect(online.checks.map((c) => c.name)).toEqual(['log_proof', 'log_checkpoint', 'log_inclusion', 'log_timestamp']);
    expect(online.timestamp).toMatch(/^\d{14}/);

    // Offline: nothing listens at the base URL; proof and key are what the user kept.
    const proof = await (await fetch(`${t.url}/api/v1/tasks/${id}/receipt-proof`)).text();
    const vkey = await (await fetch(`${t.url}/log/vkey`)).text();
    const offline = new HumanTaskClient({ baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
    const check = (p: string, r = receipt, more: { olderCheckpoint?: string; consistency?: string } = {}) =>
      offline.verifyReceiptLog(r, { proof: p, vkey, ...more });
    expect((await check(proof)).valid).toBe(true);

    const lines = proof.split('\n');
    expect(lines[0]).toBe('c2sp.org/tlog-proof@v1');
    expect(lines[1]).toMatch(/^extra /);
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    const rootLine = lines.indexOf('7') + 1;
    const changed = (i: number, value: string) => lines.map((l, j) => (j === i ? value : l)).join('\n');
    // The checkpoint's root: its signature fails (and the token's imprint, which covers it).
    const badRoot = await check(changed(rootLine, flip(lines[rootLine] as string)));
    expect(badRoot).toMatchObject({ valid: false, failure: 'log_checkpoint' });
    expect(badRoot.checks.find((c) => c.name === 'log_timestamp')?.detail).toMatch(/another hash than the checkpoint/);
    // A proof hash: the path no longer leads to the root.
    const hashLine = at(/^index /) + 1;
    expect(await check(changed(hashLine, flip(lines[hashLine] as string)))).toMatchObject({ valid: false, failure: 'log_inclusion' });
    // The receipt: the path no longer leads to the root.
    const [h, p, s] = receipt.split('.');
    expect(await check(proof, `${h}.${p}.${flip(s as string)}`)).toMatchObject({ valid: false, failure: 'log_inclusion' });
    // The token's imprint: one byte of it.
    const token = Buffer.from((lines[1] as string).slice(6), 'base64');
    const imprint = createHash('sha256')
      .update(lines.slice(at(/^$/) + 1).join('\n'))
      .digest();
    const where = token.indexOf(imprint);
    expect(where).toBeGreaterThan(0);
    token[where] = (token[where] ?? 0) ^ 1;
    const badToken = await check(changed(1, `extra ${token.toString('base64')}`));
    expect(badToken).toMatchObject({ valid: false, failure: 'log_timestamp' });
    expect(badToken.checks.find((c) => c.name === 'log_timestamp')?.detail).toMatch(/another hash/);
    // The token's CMS signature and chain (the TSA's CA given as trusted, then another CA).
    const timestampDetail = (v: { checks: { name: string; detail: string }[] }) => v.checks.find((c) => c.name === 'log_timestamp')?.detail;
    expect(timestampDetail(await check(proof))).toMatch(/signed by Test TSA: signature verifies \(chain not checked/);
    const chained = await offline.verifyReceiptLog(receipt, { proof, vkey, tsaCa: readFileSync(tsa.caFile, 'utf8') });
    expect(chained.valid).toBe(true);
    expect(timestampDetail(chained)).toMatch(/chain to a trusted TSA certificate/);
    const otherCa = await offline.verifyReceiptLog(receipt, { proof, vkey, tsaCa: readFileSync(tsa.otherCaFile, 'utf8') });
    expect(otherCa).toMatchObject({ valid: false, failure: 'log_timestamp' });
    expect(timestampDetail(otherCa)).toMatch(/does not chain to a trusted TSA certificate/);
    const signedToken = Buffer.from((lines[1] as string).slice(6), 'base64');
    signedToken[signedToken.length - 1] = (signedToken[signedToken.length - 1] ?? 0) ^ 1;
    const badSignature = await check(changed(1, `extra ${signedToken.toString('base64')}`));
    expect(badSignature).toMatchObject({ valid: false, failure: 'log_timestamp' });
    expect(timestampDetail(badSignature)).toMatch(/signature does not verify/);

    // Consistency: the log grows; the kept checkpoint is a prefix of the new one.
    await others(5, 'later');
    await integrateLog(t.deps);
    const grown = await client.verifyReceiptLog(id, { olderCheckpoint: kept });
    expect(grown.valid).toBe(true);
    expect(grown.checks.at(-1)).toMatchObject({ name: 'log_consistency', ok: true, detail: 'the log only grew: 7 → 12 leaves' });
    // A fork: the same key signed another tree of 7 leaves.
    const fork = signNote(checkpointBody(t.deps.receiptLog.name, 7, Buffer.alloc(32, 9), []), t.deps.receiptLog);
    const forked = await client.verifyReceiptLog(id, { olderCheckpoint: fork });
    expect(forked).toMatchObject({ valid: false, failure: 'log_consistency' });
    expect(forked.checks.at(-1)?.detail).toMatch(/does not extend the older checkpoint of 7: the log was forked or rewritten/);
    // A rollback: the kept checkpoint is larger than the log now.
    const ahead = signNote(checkpointBody(t.deps.receiptLog.name, 99, Buffer.alloc(32, 9), []), t.deps.receiptLog);
    expect((await client.verifyReceiptLog(id, { olderCheckpoint: ahead })).checks.at(-1)?.detail).toMatch(/rolled back or forked/);
    // Offline consistency, from files; a changed proof hash is named.
    const consistency = await (await fetch(`${t.url}/log/consistency?from=7`)).text();
    expect((await check(proof, receipt, { olderCheckpoint: kept, consistency })).valid).toBe(true);
    const cl = consistency.split('\n');
    const badConsistency = cl.map((l, i) => (i === 2 ? flip(l) : l)).join('\n');
    expect((await check(proof, receipt, { olderCheckpoint: kept, consistency: badConsistency })).failure).toBe('log_consistency');

    // htask: online (the grown log's checkpoint time-stamped too), then offline from files with a changed checkpoint.
    await timestampCheckpoint(t.deps);
    const ok = await htask(['verify', id, '--issuer', t.config.baseUrl, '--checkpoint', file('kept', kept), '--tsa-ca', tsa.caFile], { baseUrl: t.url });
    expect(ok.stdout).toMatch(/✓ log_timestamp\s+RFC 3161 token over the checkpoint, .*chain to a trusted TSA certificate/);
    expect(ok.stdout).toMatch(/✓ log_inclusion\s+logged at position \d+ of the public log/);
    expect(ok.stdout).toMatch(/✓ log_consistency\s+the log only grew: 7 → 12 leaves/);
    expect(ok.code).toBe(0);
    const jwks = file('jwks.json', await (await fetch(`${t.url}/.well-known/jwks.json`)).text());
    const bad = await htask(
      [
        'verify',
        receipt,
        '--issuer',
        t.config.baseUrl,
        '--jwks-file',
        jwks,
        '--proof',
        file('bad.proof', changed(rootLine, flip(lines[rootLine] as string))),
        '--vkey',
        file('vkey', vkey),
      ],
      { baseUrl: 'http://127.0.0.1:9' },
    );
    expect(bad.stdout).toMatch(/✗ log_checkpoint\s+the signature by \S+ does not verify: the checkpoint was changed/);
    expect(bad.code).toBe(4);
  }, 120_000);
});
