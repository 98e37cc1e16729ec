import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { integrateLog } from '../src/services/receipt-log/receipt-log.js';
import { deliveredRecord, importOk } from './import.support.js';
import { type Json, patchOk, submit } from './operator.support.js';
import { parseCheckpoint, tilePath } from './receipt-log.support.js';
import { STORES, startTestApp, type TestApp, useTestApp } from './support/app.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

/** The public receipt log's bad input and faults (issue 52): never a 500, a hang or a fork. */

/** A GET with the path sent exactly as written (fetch would resolve `..` before sending). */
function rawGet(base: string, path: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(STORES)('receipt log bad input on %s', (store) => {
  const t = useTestApp({ store });

  async function deliver(): Promise<Json> {
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' });
    return patchOk(t, id, { status: 'delivered', operator_notes: 'Done.' });
  }

  it('answers 404 not_found for a receipt that waits for the sequencer, and the proof once integrated', async () => {
    const task = await deliver();
    const id = String(task.task_id);
    expect(task.receipt_log_index).toBeNull();
    const waiting = await fetch(`${t.url}/api/v1/tasks/${id}/receipt-proof`);
    expect(waiting.status).toBe(404);
    expect(((await waiting.json()) as Json).error).toBe('not_found');
    await integrateLog(t.deps);
    const proof = await fetch(`${t.url}/api/v1/tasks/${id}/receipt-proof`);
    expect(proof.status).toBe(200);
    expect(proof.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await proof.text()).toMatch(/^c2sp\.org\/tlog-proof@v1\nindex \d+\n/);
  });

  it('answers 404 for the proof of an unknown task, of an over-long id, and of a task not delivered', async () => {
    const open = await submit(t);
    for (const id of ['task-2030-00000000000000000000000000000000', open, 'x'.repeat(300), '%00']) {
      const res = await fetch(`${t.url}/api/v1/tasks/${id}/receipt-proof`);
      expect([400, 404], id).toContain(res.status);
      expect(((await res.json()) as Json).error).toMatch(/not_found|malformed_request/);
    }
  });

  it('never logs an imported receipt (this service did not issue it)', async () => {
    await integrateLog(t.deps);
    const before = parseCheckpoint(await (await fetch(`${t.url}/log/checkpoint`)).text()).size;
    const record = deliveredRecord();
    expect((await importOk(t, [record])).imported).toBe(1);
    await integrateLog(t.deps);
    expect(parseCheckpoint(await (await fetch(`${t.url}/log/checkpoint`)).text()).size).toBe(before);
    expect((await fetch(`${t.url}/api/v1/tasks/${String(record.task_id)}/receipt-proof`)).status).toBe(404);
    expect(((await (await fetch(`${t.url}/api/v1/tasks/${String(record.task_id)}`)).json()) as Json).receipt_log_index).toBeNull();
  });

  it('answers malformed, out-of-range and traversing tile paths with 404 or 400, never a 500', async () => {
    await deliver();
    await integrateLog(t.deps);
    const paths = [
      '/log/tile/9/x',
      '/log/tile/-1/000',
      '/log/tile/0/-01',
      '/log/tile/0/1',
      '/log/tile/0/0000',
      '/log/tile/0/x000/001',
      '/log/tile/0/001',
      '/log/tile/0/x999/999/999/999/999',
      `/log/tile/0/${'x999/'.repeat(60)}999`,
      '/log/tile/99999999999999999999/000',
      '/log/tile/64/000',
      '/log/tile/1/000',
      '/log/tile/0/000.p/0',
      '/log/tile/0/000.p/256',
      '/log/tile/0/000.p/01',
      '/log/tile/0/000.p/abc',
      '/log/tile/0/000.p/200',
      '/log/tile/entries/001',
      '/log/tile/entries/000.p/-1',
      '/log/tile/entries/../../checkpoint',
      '/log/tile/../checkpoint',
      '/log/tile/0/..%2f..%2fcheckpoint',
      '/log/tile/0/%2e%2e/000',
      '/log/tile/',
      '/log/tile/0/000%00',
    ];
    for (const path of paths) {
      const res = await rawGet(t.url, path);
      expect([400, 404], `${path}: ${res.status} ${res.body.slice(0, 200)}`).toContain(res.status);
      expect(res.body, path).not.toMatch(/at \w+ \(|node_modules|kysely/i);
      expect(res.body, path).toMatch(/not_found|malformed_request/);
    }
    // The one valid partial tile of this tree answers.
    const size = parseCheckpoint(await (await fetch(`${t.url}/log/checkpoint`)).text()).size;
    expect((await fetch(`${t.url}${tilePath(0, 0, size)}`)).status).toBe(200);
    expect((await fetch(`${t.url}${tilePath('entries', 0, size)}`)).status).toBe(200);
  });
});

const pgUrl = process.env.TEST_POSTGRES_URL;

describe.skipIf(!pgUrl)('the receipt log while PostgreSQL is unreachable', () => {
  let app: TestApp | undefined;
  let proxy: TcpProxy | undefined;
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await app?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 service_unavailable with Retry-After for the checkpoint, tiles and proofs', async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(database.url);
    proxied.host = `127.0.0.1:${proxy.port}`;
    app = await startTestApp({ env: { DATABASE_URL: proxied.toString() } });
    expect((await fetch(`${app.url}/log/checkpoint`)).status).toBe(200);
    proxy.setMode('refuse');
    // The verifier key is the log's identity, known from the start: it needs no store.
    expect((await fetch(`${app.url}/log/vkey`)).status).toBe(200);
    for (const path of ['/log/checkpoint', tilePath(0, 0), '/api/v1/tasks/task-2030-00000000000000000000000000000000/receipt-proof']) {
      const res = await fetch(`${app.url}${path}`);
      const body = await res.text();
      expect(res.status, `${path}: ${body}`).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect((JSON.parse(body) as Json).error).toBe('service_unavailable');
    }
    proxy.setMode('forward');
  });
});
