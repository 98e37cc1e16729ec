import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Migrator } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as client from '../src/domain/network/client.js';
import { migrate, openStore, type Store } from '../src/store/db.js';
import { migrations } from '../src/store/migrations/index.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

/**
 * An ip entry names the prefix it blocks (migration 240), so a submission from a new address hashes
 * its networks only at the prefixes active entries name: one HMAC for the client with no network
 * entries, where it used to be 25 (IPv4: /32 down to /8) or 49 (IPv6: /64 down to /16) on every
 * submission from a new address (issue 28). Entries stored before the migration keep matching.
 */

vi.mock('../src/domain/network/client.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/domain/network/client.js')>();
  return { ...original, keyHash: vi.fn(original.keyHash), clientHash: vi.fn(original.clientHash) };
});
// Every HMAC of an address: the client's own (clientHash) and its networks' (keyHash).
const clientHashes = vi.mocked(client.clientHash);
const networkHashes = vi.mocked(client.keyHash);
const hashes = {
  mockClear: () => {
    clientHashes.mockClear();
    networkHashes.mockClear();
  },
  count: () => clientHashes.mock.calls.length + networkHashes.mock.calls.length,
};

describe.each(STORES)('network entries on %s', (store) => {
  const t = useTestApp({ store, env: { TRUST_PROXY: '1' } });
  const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
  const submit = (ip: string) => postJson(`${t.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': ip });

  it('a new address costs one hash with no network entries, and one more per prefix entries name', async () => {
    hashes.mockClear();
    expect((await submit('192.0.2.10')).status).toBe(202);
    expect(hashes.count()).toBe(1);
    expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: '198.18.7.0/24' }, admin)).status).toBe(201);
    expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: '198.19.0.0/16' }, admin)).status).toBe(201);
    expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: '198.19.0.0/17' }, admin)).status).toBe(201);
    hashes.mockClear();
    expect((await submit('192.0.2.11')).status).toBe(202);
    // The client, and its networks at /24, /16 and /17.
    expect(hashes.count()).toBe(4);
    expect((await submit('198.18.7.200')).status).toBe(403);
    expect((await submit('198.19.200.1')).status).toBe(403);
    expect((await submit('198.20.0.1')).status).toBe(202);
  });

  it('an entry stored before its prefix was (-1) still blocks every address of its network', async () => {
    const value = client.keyHash(t.deps.secret, '203.0.113.0/24');
    await t.store.db
      .insertInto('blocklist')
      .values({
        id: 'blk-legacy-network',
        kind: 'ip',
        value,
        reason: null,
        source: 'admin',
        created_at: '2026-01-01T00:00:00.000Z',
        expires_at: null,
        prefix_bits: -1,
      })
      .execute();
    expect((await submit('203.0.113.50')).status).toBe(403);
    expect((await submit('203.0.114.50')).status).toBe(202);
  });
});

describe('migration 240 on entries stored before it (SQLite)', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('marks operators’ ip entries unknown (-1) and leaves automatic ones as one client (null)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-m240-'));
    dirs.push(dir);
    const store = openStore(`sqlite:${path.join(dir, 'service.db')}`);
    stores.push(store);
    const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('230_outbox_claim_rank')).error).toBeUndefined();
    const row = (id: string, kind: string, source: string) => ({
      id,
      kind,
      value: `v-${id}`,
      reason: null,
      source,
      created_at: '2026-01-01T00:00:00.000Z',
      expires_at: null,
    });
    // Written as the store was before 240 (no prefix_bits column yet).
    await store.db
      .insertInto('blocklist')
      .values([row('a', 'ip', 'admin'), row('b', 'ip', 'auto'), row('c', 'email', 'admin')] as never)
      .execute();
    await migrate(store);
    const rows = await store.db.selectFrom('blocklist').select(['id', 'prefix_bits']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 'a', prefix_bits: -1 },
      { id: 'b', prefix_bits: null },
      { id: 'c', prefix_bits: null },
    ]);
  });
});
