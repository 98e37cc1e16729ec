import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkpointBody, signNote } from '../src/receipts/log-note.js';
import { integrateLog } from '../src/services/receipt-log/receipt-log.js';
import { insertLeaves } from '../src/store/receipt-log/receipt-log-repo.js';
import { patchOk, submit } from './operator.support.js';
import { runCli } from './receipts.support.js';
import { STORES, useTestApp } from './support/app.js';

/**
 * `npm run verify-receipt` checks the public log too (docs/receipt-log.md): offline, from the
 * receipt, its tlog-proof, the JWKS and the log's verifier key held as files; a changed byte in
 * the checkpoint, a proof hash or the receipt is named by the check it breaks.
 */
describe('verify-receipt and the public log', () => {
  const t = useTestApp();

  it('verifies offline from files, and names the part a changed byte is in', async () => {
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' });
    const task = await patchOk(t, id, { status: 'delivered', operator_notes: 'Open from 8.' });
    // Other leaves around it, so its proof has hashes to change.
    await insertLeaves(
      t.store.db,
      [1, 2, 3, 4].map((i) => ({ taskId: null, data: `other leaf ${i}`, createdAt: new Date().toISOString() })),
    );
    await integrateLog(t.deps);
    const dir = t.dataDir;
    const file = (name: string, content: string) => {
      const where = path.join(dir, name);
      writeFileSync(where, content);
      return where;
    };
    const receipt = String(task.receipt);
    const proof = await (await fetch(`${t.url}/api/v1/tasks/${id}/receipt-proof`)).text();
    const jwks = file('jwks.json', await (await fetch(`${t.url}/.well-known/jwks.json`)).text());
    const vkey = file('log.vkey', await (await fetch(`${t.url}/log/vkey`)).text());
    const notes = file('notes.txt', 'Open from 8.');
    // Nothing listens there: every check must run from the files.
    const offlineArgs = (proofFile: string, jws = receipt) => [
      jws,
      '--base-url',
      'http://127.0.0.1:9',
      '--issuer',
      t.config.baseUrl,
      '--jwks-file',
      jwks,
      '--notes-file',
      notes,
      '--proof',
      proofFile,
      '--vkey',
      vkey,
    ];
    const offline = (proofFile: string, jws = receipt) => runCli('verify-receipt', offlineArgs(proofFile, jws));

    const ok = await offline(file('ok.tlog-proof', proof));
    expect(ok.stdout).toMatch(/✓ log_checkpoint\s+signed by/);
    expect(ok.stdout).toMatch(/✓ log_inclusion\s+logged at position \d+ of the public log/);
    expect(ok.stdout).toContain('VALID');
    expect(ok.code).toBe(0);

    // One byte of the checkpoint's root: its signature no longer verifies.
    const lines = proof.split('\n');
    const rootLine = lines.findIndex((line, i) => i > 0 && lines[i - 2] !== undefined && /^\d+$/.test(lines[i - 1] ?? '') && lines[i - 2]?.endsWith('/log'));
    const flip = (line: string) => (line[0] === 'A' ? `B${line.slice(1)}` : `A${line.slice(1)}`);
    const badCheckpoint = [...lines];
    badCheckpoint[rootLine] = flip(lines[rootLine] as string);
    const checkpointRun = await offline(file('bad-checkpoint.tlog-proof', badCheckpoint.join('\n')));
    expect(checkpointRun.code).toBe(1);
    expect(checkpointRun.stdout).toMatch(/✗ log_checkpoint\s+the signature by \S+ does not verify/);

    // One byte of the receipt (its signature part): the JWS and the inclusion path both fail.
    const parts = receipt.split('.');
    const tampered = `${parts[0]}.${parts[1]}.${flip(parts[2] as string)}`;
    const receiptRun = await offline(file('ok2.tlog-proof', proof), tampered);
    expect(receiptRun.code).toBe(1);
    expect(receiptRun.stdout).toMatch(/✗ signature/);
    expect(receiptRun.stdout).toMatch(/✗ log_inclusion/);

    // A proof hash changed: the path no longer leads to the signed root.
    expect(lines[2]).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const badPath = [...lines];
    badPath[2] = flip(lines[2] as string);
    const pathRun = await offline(file('bad-path.tlog-proof', badPath.join('\n')));
    expect(pathRun.code).toBe(1);
    expect(pathRun.stdout).toMatch(/✓ log_checkpoint/);
    expect(pathRun.stdout).toMatch(/✗ log_inclusion\s+the receipt at index \d+ does not lead to the checkpoint's root/);
    // Not a proof at all.
    const garbage = await offline(file('garbage.tlog-proof', 'hello\n'));
    expect(garbage.code).toBe(1);
    expect(garbage.stdout).toMatch(/✗ log_proof\s+not a C2SP tlog-proof/);

    // Consistency with a checkpoint kept before: the log only grew; a forked one is named.
    const kept = file('old.checkpoint', await (await fetch(`${t.url}/log/checkpoint`)).text());
    await insertLeaves(
      t.store.db,
      [5, 6, 7].map((i) => ({ taskId: null, data: `other leaf ${i}`, createdAt: new Date().toISOString() })),
    );
    await integrateLog(t.deps);
    const oldSize = Number((await (await fetch(`${t.url}/log/checkpoint`)).text()).split('\n')[1]) - 3;
    const consistencyRes = await fetch(`${t.url}/log/consistency?from=${oldSize}`);
    expect(consistencyRes.status).toBe(200);
    const consistency = file('c.proof', await consistencyRes.text());
    const grown = await runCli('verify-receipt', [...offlineArgs(file('ok3.tlog-proof', proof)), '--checkpoint', kept, '--consistency', consistency]);
    expect(grown.stdout).toMatch(new RegExp(`✓ log_consistency\\s+the log only grew: ${oldSize} → ${oldSize + 3} leaves`));
    expect(grown.code).toBe(0);
    // The same key signed another tree of the same size: a fork.
    const fork = file('fork.checkpoint', signNote(checkpointBody(t.deps.receiptLog.name, oldSize, Buffer.alloc(32, 7), []), t.deps.receiptLog));
    const forked = await runCli('verify-receipt', [...offlineArgs(file('ok4.tlog-proof', proof)), '--checkpoint', fork, '--consistency', consistency]);
    expect(forked.code).toBe(1);
    expect(forked.stdout).toMatch(/✗ log_consistency\s+the tree of \d+ leaves does not extend the older checkpoint of \d+: the log was forked or rewritten/);
    // Online: the proof fetched from the service, for a kept checkpoint larger than the log.
    const ahead = file('ahead.checkpoint', signNote(checkpointBody(t.deps.receiptLog.name, oldSize + 100, Buffer.alloc(32, 7), []), t.deps.receiptLog));
    const online = await runCli('verify-receipt', [id, '--base-url', t.url, '--checkpoint', ahead]);
    expect(online.code).toBe(1);
    expect(online.stdout).toMatch(/✓ log_inclusion/);
    expect(online.stdout).toMatch(/✗ log_consistency\s+the log is now smaller than the older checkpoint/);
  }, 120_000);
});

describe.each(STORES)('GET /log/consistency (%s)', (store) => {
  const t = useTestApp({ store });

  it("answers consistency proofs from O(log n) nodes, and bad sizes with the contract's errors", async () => {
    await insertLeaves(
      t.store.db,
      Array.from({ length: 1000 }, (_, i) => ({ taskId: null, data: `leaf ${i}`, createdAt: new Date().toISOString() })),
    );
    await integrateLog(t.deps);
    const text = await (await fetch(`${t.url}/log/consistency?from=333`)).text();
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual(['tlog-consistency@v1', 'old 333']);
    // RFC 9162: at most about 2·log2(n) hashes.
    expect(lines.indexOf('') - 2).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(1000)));
    const size = Number(lines[lines.indexOf('') + 2]);
    expect(size).toBeGreaterThanOrEqual(1000);
    expect((await fetch(`${t.url}/log/consistency?from=${size}`)).status).toBe(200);
    expect((await fetch(`${t.url}/log/consistency?from=${size + 1}`)).status).toBe(404);
    for (const bad of ['-1', 'x', '', '1e3']) {
      const res = await fetch(`${t.url}/log/consistency?from=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'malformed_request' });
    }
    expect((await fetch(`${t.url}/log/consistency`)).status).toBe(400);
  });
});
