import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { integrateLog } from '../src/services/receipt-log/receipt-log.js';
import { adminGet, patchOk, submit } from './operator.support.js';
import { parseCheckpoint } from './receipt-log.support.js';
import { runCli } from './receipts.support.js';
import { STORES, useTestApp } from './support/app.js';

/**
 * The audit log as a hash chain (issue 52): each entry's hash recomputed independently (the
 * canonicalize package, not the service's helper), the head in each checkpoint, and
 * `npm run audit:verify` naming the first entry that was changed, even when every later hash was
 * rewritten to match.
 */

const canonicalize = createRequire(import.meta.url)('canonicalize') as (value: unknown) => string;

interface Entry {
  at: string;
  actor: string;
  action: string;
  task_id: string | null;
  details: Record<string, unknown>;
  hash: string | null;
}

describe.each(STORES)('the audit hash chain on %s', (store) => {
  const t = useTestApp({ store });
  const env = () => ({ DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' });

  async function entriesOldestFirst(): Promise<Entry[]> {
    const res = await adminGet(t, '/api/v1/admin/audit?limit=100');
    expect(res.status).toBe(200);
    return ((await res.json()) as { entries: Entry[] }).entries.reverse();
  }

  it('chains every entry, puts the head in the checkpoint, and audit:verify names the first changed entry', async () => {
    for (let i = 0; i < 3; i++) {
      const id = await submit(t);
      await patchOk(t, id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' });
      await patchOk(t, id, { status: 'delivered', operator_notes: `Done ${i}.` });
    }
    expect((await entriesOldestFirst()).every((e) => e.hash === null)).toBe(true);
    await integrateLog(t.deps);

    const entries = await entriesOldestFirst();
    expect(entries.length).toBe(6);
    let previous = '0'.repeat(64);
    for (const { hash, ...entry } of entries) {
      previous = createHash('sha256')
        .update(`${previous}\n${canonicalize(entry)}`)
        .digest('hex');
      expect(hash).toBe(previous);
    }
    const note = await (await fetch(`${t.url}/log/checkpoint`)).text();
    const checkpoint = parseCheckpoint(note);
    expect(checkpoint.extensions).toEqual([`audit 6 ${Buffer.from(previous, 'hex').toString('base64')}`]);
    const held = path.join(t.dataDir, 'held.checkpoint');
    writeFileSync(held, note);

    const ok = await runCli('audit-verify', [held], env());
    expect(ok.stdout + ok.stderr).toContain('OK: 6 audit entries chained');
    expect(ok.code).toBe(0);

    // One byte of one stored entry changed: named, by its place and id.
    const victim = await t.store.db.selectFrom('audit_log').select(['id', 'details', 'chain_index']).where('chain_index', '=', 2).executeTakeFirstOrThrow();
    const tampered = victim.details.replace('"to":"accepted"', '"to":"acceptee"');
    expect(tampered).not.toBe(victim.details);
    await t.store.db.updateTable('audit_log').set({ details: tampered }).where('id', '=', victim.id).execute();
    const bad = await runCli('audit-verify', [held], env());
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`entry 2 (id ${victim.id}`);

    // Rewritten with every later hash recomputed: the chain holds, the checkpoints contradict it.
    const rows = await t.store.db.selectFrom('audit_log').selectAll().where('chain_index', 'is not', null).orderBy('chain_index').execute();
    let rewritten = '0'.repeat(64);
    for (const row of rows) {
      const entry = { at: row.at, actor: row.actor, action: row.action, task_id: row.task_id, details: JSON.parse(row.details) as unknown };
      rewritten = createHash('sha256')
        .update(`${rewritten}\n${canonicalize(entry)}`)
        .digest('hex');
      await t.store.db.updateTable('audit_log').set({ hash: rewritten }).where('id', '=', row.id).execute();
    }
    const forged = await runCli('audit-verify', [held], env());
    expect(forged.code).toBe(1);
    expect(forged.stdout).toContain(`${held} names head ${previous} after 6 entries`);
    expect(forged.stdout).toContain('the latest checkpoint names head');
  }, 120_000);
});
