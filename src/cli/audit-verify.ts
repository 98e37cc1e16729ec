import { readFileSync } from 'node:fs';
import { loadConfigOrExit } from '../config.js';
import { AUDIT_CHAIN_START, auditEntryHash } from '../domain/team/audit-chain.js';
import { migrate, openStore } from '../store/db.js';
import { auditChainPage, latestCheckpoint } from '../store/receipt-log/receipt-log-repo.js';

/**
 * `npm run audit:verify [older-checkpoint-file…]`: recomputes the audit log's hash chain on the
 * configured DATABASE_URL from its first entry, names the first entry whose stored hash does not
 * match, and checks the chain's head against the `audit <entries> <head>` line of the latest
 * checkpoint (and of each checkpoint file given, e.g. one a third party kept): an entry rewritten
 * along with every hash after it still contradicts the checkpoints signed before.
 */

const PAGE = 1000;

interface Expectation {
  source: string;
  entries: number;
  head: string;
}

function auditLine(note: string, source: string): Expectation | undefined {
  const match = /^audit (0|[1-9][0-9]*) ([A-Za-z0-9+/]{43}=)$/m.exec(note.split('\n\n')[0] ?? '');
  if (!match) return undefined;
  return { source, entries: Number(match[1]), head: Buffer.from(match[2] as string, 'base64').toString('hex') };
}

async function main(): Promise<number> {
  const config = loadConfigOrExit();
  const store = openStore(config.databaseUrl, { poolSize: 1 });
  const problems: string[] = [];
  try {
    await migrate(store);
    const latest = await latestCheckpoint(store.db);
    const expectations: Expectation[] = [];
    const fromLatest = latest && auditLine(latest.note, 'the latest checkpoint');
    if (fromLatest) expectations.push(fromLatest);
    for (const file of process.argv.slice(2)) {
      const line = auditLine(readFileSync(file, 'utf8'), file);
      if (line) expectations.push(line);
      else problems.push(`${file}: no "audit <entries> <head>" line in this checkpoint`);
    }
    // The recomputed head after n entries, for each n a checkpoint names.
    const wanted = new Set(expectations.map((e) => e.entries));
    const headAt = new Map<number, string>([[0, AUDIT_CHAIN_START]]);
    let previous = AUDIT_CHAIN_START;
    let count = 0;
    let firstBad: string | undefined;
    for (;;) {
      const rows = await auditChainPage(store.db, count, PAGE);
      for (const row of rows) {
        if (Number(row.chain_index) !== count) {
          firstBad ??= `entry ${count} is missing (the next is ${String(row.chain_index)}, id ${row.id})`;
        }
        let details: Record<string, unknown>;
        try {
          details = JSON.parse(row.details) as Record<string, unknown>;
        } catch {
          details = { unreadable: row.details };
        }
        previous = auditEntryHash(previous, { at: row.at, actor: row.actor, action: row.action, task_id: row.task_id, details });
        if (row.hash !== previous) {
          firstBad ??= `entry ${count} (id ${row.id}, ${row.at}, ${row.action}) does not match its hash: stored ${String(row.hash)}, recomputed ${previous}`;
        }
        count += 1;
        if (wanted.has(count)) headAt.set(count, previous);
      }
      if (rows.length < PAGE) break;
    }
    if (firstBad) problems.push(`audit chain: ${firstBad}`);
    for (const e of expectations) {
      const head = headAt.get(e.entries);
      if (head === undefined) problems.push(`${e.source} names ${e.entries} entries; the log holds ${count}`);
      else if (head !== e.head) problems.push(`${e.source} names head ${e.head} after ${e.entries} entries; the log recomputes ${head}`);
    }
    if (problems.length > 0) {
      process.stdout.write(`FAILED\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
      return 1;
    }
    process.stdout.write(
      `OK: ${count} audit entries chained; head ${previous}; matches ${expectations.map((e) => e.source).join(', ') || 'no checkpoint yet'}\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`audit:verify failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
