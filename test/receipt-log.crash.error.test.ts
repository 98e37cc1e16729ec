import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQLite } from '../src/store/sqlite-driver.js';
import { ADMIN, type Json } from './operator.support.js';
import { checkpointSignedBy, hashLeaf, merkleRoot, parseCheckpoint, parseProof, readWholeLog, rootFromInclusion } from './receipt-log.support.js';
import { postJson, RELAXED_LIMITS, STORES, TEST_ADMIN_KEY, validTask } from './support/app.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { freePort, waitForServer } from './support/net.js';

/**
 * The receipt log under a SIGKILL (issue 52): the real entry point is killed in the middle of a
 * flood of deliveries (on PostgreSQL while a second instance sequences beside it); after a
 * restart, every delivered task's receipt is in the log exactly once, the tree recomputed from the
 * tiles matches the signed checkpoint, and every checkpoint ever signed is a prefix of it (no fork).
 */

const ROOT = path.resolve(import.meta.dirname, '..');

function start(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['dist/server.mjs'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DNS_SERVERS: '127.0.0.1:9', DNS_TIMEOUT_MS: '200', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

beforeAll(() => {
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
}, 120_000);

describe.each(STORES)('a server killed during a delivery flood on %s', (store) => {
  const children: ChildProcess[] = [];
  let dataDir: string;
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'hts-log-crash-'));
    if (store === 'postgres') database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function launch(): Promise<{ child: ChildProcess; url: string }> {
    const port = await freePort();
    const child = start({
      ...RELAXED_LIMITS,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_KEY: TEST_ADMIN_KEY,
      // One deployment: every instance names the same origin (the log's identity).
      BASE_URL: 'https://tasks.example-service.dev',
      ...(database ? { DATABASE_URL: database.url } : {}),
    });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    await waitForServer(`${url}/api/v1/health`);
    return { child, url };
  }

  async function patch(url: string, id: string, body: Json): Promise<Response> {
    return fetch(`${url}/api/v1/admin/tasks/${id}`, { method: 'PATCH', headers: { ...ADMIN, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  async function storedCheckpoints(): Promise<{ size: number; note: string }[]> {
    const query = 'select size, note from log_checkpoints order by size';
    if (database) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        return (await client.query<{ size: number; note: string }>(query)).rows;
      } finally {
        await client.end();
      }
    }
    const db = new SQLite(path.join(dataDir, 'service.db'), { readonly: true });
    try {
      return db.prepare(query).all() as { size: number; note: string }[];
    } finally {
      db.close();
    }
  }

  it('loses no receipt, uses no index twice and forks nothing', async () => {
    const a = await launch();
    // On PostgreSQL a second instance runs (and sequences) beside the one killed.
    const b = store === 'postgres' ? await launch() : undefined;
    const instances = [a.url, ...(b ? [b.url] : [])];
    const ids: string[] = [];
    for (let i = 0; i < 80; i++) {
      const res = await postJson(`${a.url}/api/v1/tasks`, validTask());
      ids.push(((await res.json()) as { task_id: string }).task_id);
    }
    for (const id of ids) expect((await patch(a.url, id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' })).status).toBe(200);

    const acknowledged = new Map<string, string>();
    let sent = 0;
    const flood = Promise.all(
      ids.map(async (id, i) => {
        await new Promise((r) => setTimeout(r, i * 15));
        sent += 1;
        try {
          const res = await patch(instances[i % instances.length] as string, id, { status: 'delivered', operator_notes: `Result ${i}.` });
          if (res.status === 200) acknowledged.set(id, String(((await res.json()) as Json).receipt));
        } catch {
          // The killed instance's connections end without an answer: not acknowledged.
        }
      }),
    );
    // Killed in the middle: once some deliveries are acknowledged and others are still coming.
    while ((sent < ids.length / 2 || acknowledged.size < 10) && acknowledged.size < ids.length - 10) await new Promise((r) => setTimeout(r, 5));
    a.child.kill('SIGKILL');
    await new Promise((resolve) => a.child.once('exit', resolve));
    await flood;
    expect(acknowledged.size).toBeGreaterThanOrEqual(10);

    const restarted = await launch();
    const base = restarted.url;
    const vkey = await (await fetch(`${base}/log/vkey`)).text();
    // Every task delivered (acknowledged or committed just before the kill) gets its place within seconds.
    const delivered = new Map<string, { receipt: string; index: number | null }>();
    const until = Date.now() + 10_000;
    for (;;) {
      delivered.clear();
      for (const id of ids) {
        const task = (await (await fetch(`${base}/api/v1/tasks/${id}`)).json()) as Json;
        if (task.status === 'delivered') delivered.set(id, { receipt: String(task.receipt), index: task.receipt_log_index as number | null });
      }
      if ([...delivered.values()].every((d) => d.index !== null) || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const [id, receipt] of acknowledged) expect(delivered.get(id)?.receipt, `acknowledged ${id}`).toBe(receipt);
    expect([...delivered.values()].filter((d) => d.index === null)).toEqual([]);

    const checkpoint = parseCheckpoint(await (await fetch(`${base}/log/checkpoint`)).text());
    expect(checkpointSignedBy(checkpoint, vkey)).toBe(true);
    expect(checkpoint.size).toBe(delivered.size);
    const log = await readWholeLog(base, checkpoint.size);
    expect(merkleRoot(log.hashes).equals(checkpoint.root)).toBe(true);
    // Each receipt exactly once, at the index its task names.
    expect(new Set(log.entries.map((e) => e.toString())).size).toBe(log.entries.length);
    for (const [id, d] of delivered) {
      expect(log.entries[d.index as number]?.toString(), id).toBe(d.receipt);
      const proof = parseProof(await (await fetch(`${base}/api/v1/tasks/${id}/receipt-proof`)).text());
      expect(rootFromInclusion(proof.index, checkpoint.size, hashLeaf(Buffer.from(d.receipt)), proof.proof)?.equals(checkpoint.root)).toBe(true);
    }
    // No fork: every checkpoint ever signed, by either instance, is a prefix of today's tree.
    const all = await storedCheckpoints();
    expect(all.length).toBeGreaterThan(0);
    for (const row of all) {
      const old = parseCheckpoint(row.note);
      expect(checkpointSignedBy(old, vkey)).toBe(true);
      expect(merkleRoot(log.hashes.slice(0, old.size)).equals(old.root), `checkpoint of size ${old.size}`).toBe(true);
    }
  }, 120_000);
});
