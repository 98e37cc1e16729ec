import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integrateLog, timestampCheckpoint } from '../src/services/receipt-log/receipt-log.js';
import { type Json, patchOk, submit } from './operator.support.js';
import { parseProof } from './receipt-log.support.js';
import { useTestApp } from './support/app.js';
import { startTestTsa, type TestTsa } from './support/tsa.js';

/**
 * Trusted time for the receipt log (docs/receipt-log.md): each new checkpoint time-stamped by a
 * real RFC 3161 authority (openssl ts -reply, test CA), the token served and on the proof's extra
 * line, checked by openssl itself; a TSA that hangs, answers garbage or signs another hash delays
 * time-stamps only, shows in readiness and metrics, and no bad token is ever served.
 */
let tsa: TestTsa;
beforeAll(async () => {
  tsa = await startTestTsa();
}, 60_000);
afterAll(async () => {
  await tsa.close();
});

describe('the receipt log with a time-stamp authority', () => {
  const t = useTestApp(() => ({ background: true, env: { TSA_URL: tsa.url, TSA_CA_FILE: tsa.caFile, TSA_TIMEOUT_MS: '1000' } }));

  async function deliverAndIntegrate(): Promise<Json> {
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' });
    const task = await patchOk(t, id, { status: 'delivered', operator_notes: 'Done.' });
    await integrateLog(t.deps);
    return task;
  }

  async function ready(): Promise<Json> {
    return (await (await fetch(`${t.url}/api/v1/health/ready`)).json()) as Json;
  }

  it('time-stamps the checkpoint: openssl verifies the token served and carried on the proof', async () => {
    const task = await deliverAndIntegrate();
    await timestampCheckpoint(t.deps);
    const note = Buffer.from(await (await fetch(`${t.url}/log/checkpoint`)).arrayBuffer());
    const res = await fetch(`${t.url}/log/checkpoint.tsr`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/timestamp-reply');
    const token = Buffer.from(await res.arrayBuffer());
    const proof = parseProof(await (await fetch(`${t.url}/api/v1/tasks/${String(task.task_id)}/receipt-proof`)).text());
    expect(Buffer.from(proof.extra ?? '', 'base64').equals(token)).toBe(true);
    // An independent check: openssl verifies the token over the checkpoint as served, with the CA.
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-tsr-'));
    try {
      writeFileSync(path.join(dir, 'checkpoint'), note);
      writeFileSync(path.join(dir, 'token.tsr'), token);
      const out = execFileSync(
        '/usr/bin/openssl',
        ['ts', '-verify', '-in', path.join(dir, 'token.tsr'), '-data', path.join(dir, 'checkpoint'), '-CAfile', tsa.caFile],
        { encoding: 'utf8' },
      );
      expect(out).toContain('Verification: OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(((await ready()).checks as Json).timestamps).toBe('ok');
  });

  it.each([
    ['hang', /did not answer in time/],
    ['garbage', /not a TimeStampResp/],
    ['wrong-hash', /another hash/],
  ] as const)('a TSA that answers %s delays the time-stamp only: the receipt is logged, readiness and metrics say it', async (mode, why) => {
    tsa.setMode(mode);
    try {
      const task = await deliverAndIntegrate();
      await timestampCheckpoint(t.deps);
      expect((await fetch(`${t.url}/log/checkpoint.tsr`)).status).toBe(404);
      const proof = await fetch(`${t.url}/api/v1/tasks/${String(task.task_id)}/receipt-proof`);
      expect(proof.status).toBe(200);
      expect(parseProof(await proof.text()).extra).toBeNull();
      const readiness = await fetch(`${t.url}/api/v1/health/ready`);
      expect(readiness.status).toBe(200);
      expect(String((((await readiness.json()) as Json).checks as Json).timestamps)).toMatch(why);
      const metrics = await (await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer test-admin-key-0123456789' } })).text();
      expect(metrics).toMatch(/hts_log_timestamps_total\{outcome="failed"\} [1-9]/);
    } finally {
      tsa.setMode('ok');
    }
    // Back: the next tick time-stamps the checkpoint.
    await timestampCheckpoint(t.deps);
    expect((await fetch(`${t.url}/log/checkpoint.tsr`)).status).toBe(200);
    expect(((await ready()).checks as Json).timestamps).toBe('ok');
  });
});

describe('the receipt log with a TSA whose certificate another CA issued', () => {
  const t = useTestApp(() => ({ background: true, env: { TSA_URL: tsa.url, TSA_CA_FILE: tsa.otherCaFile } }));

  it('serves no token whose chain does not lead to TSA_CA_FILE', async () => {
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Done.' });
    await integrateLog(t.deps);
    await timestampCheckpoint(t.deps);
    expect((await fetch(`${t.url}/log/checkpoint.tsr`)).status).toBe(404);
    expect(String((((await (await fetch(`${t.url}/api/v1/health/ready`)).json()) as Json).checks as Json).timestamps)).toMatch(/^failing: /);
  });
});
